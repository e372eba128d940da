// Package compute defines compute targets: the named places a workspace runs jobs.
package compute
