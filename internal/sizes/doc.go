// Package sizes is the catalog of node shapes (cores, memory, GPUs, price, quota family): built-in cloud sizes, sizes derived from this machine, and the workspace's own.
package sizes
