// Package command is the provider that runs the cluster's own create and delete hooks (shell command lines), e.g. a cloud CLI that makes a VM which starts `hangar agent`.
package command
