// Package parents holds the parent loop: sweeps and pipelines are parent runs that no backend
// sees, whose children (a sweep's trials, a pipeline's steps' runs) the loop creates from what
// the store says, through the run core (Runs), so that a restarted server continues each parent
// where it was. What to do is decided by the pure engines (internal/sweep, imported as hpo,
// and internal/pipeline); the loop applies their decisions.
package parents
