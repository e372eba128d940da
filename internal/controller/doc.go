// Package controller owns the run lifecycle: it accepts jobs, applies status reports through the state machine, and runs the loop that hands queued runs to backends and watches them.
package controller
