package controller

// The controller's concerns that are not the run core's loop live on small nouns reached
// through the Controller's fields, each holding the Controller it works for (a named field, not
// embedded, so a noun's method set is its own).

// GC collects blobs no longer referenced (gc.go).
type GC struct{ c *Controller }

// Checkpoints commits and reads runs' checkpoints and their preemptions (checkpoint.go).
type Checkpoints struct{ c *Controller }

// Tracking makes the MLflow tracking API's writes to run rows (runwrites.go).
type Tracking struct{ c *Controller }

// Parents is what sweeps and pipelines ask of the run core besides the loop seam: binding step
// inputs, merging parallel rows, resolving trials, and their detail views.
type Parents struct{ c *Controller }

// Imports queues data imports and registers their versions when their runs complete
// (imports.go).
type Imports struct{ c *Controller }
