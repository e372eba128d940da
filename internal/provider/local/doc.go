// Package local is the provider that starts `hangar agent` processes on the server's machine, each with its own work dir and its slice of the cores, memory and GPUs.
package local
