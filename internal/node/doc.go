// Package node detects what a machine offers to jobs: OS, cores, memory, GPUs and a container runtime.
package node
