// Package resources holds resource vectors (CPU millicores, memory bytes, GPUs) and parses quantities such as "16Gi" and "500m"; it does no I/O.
package resources
