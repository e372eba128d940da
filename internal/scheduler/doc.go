// Package scheduler decides, from a snapshot of nodes, queue and quotas, which queued runs start on which nodes and why every other run waits; it does no I/O.
package scheduler
