// Package bench measures Hangar against baselines run in the same invocation (the bare command, a plain tar of the tree), for BENCHMARKS.md.
package bench
