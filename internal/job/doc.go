// Package job holds the job specification, the run record and the run state machine; it does no I/O.
package job
