// Package provider is the contract for where a managed cluster's nodes come from: create a machine that starts `hangar agent` with a join token, and delete it; subpackages local and command implement it.
package provider
