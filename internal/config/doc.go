// Package config holds the server's tunables that the CLI sets from `hangar server` flags and
// the controller reads: a leaf, so the CLI need not import the controller to name them.
package config
