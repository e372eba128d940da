// Package pipeline decides a pipeline job's next moves: which steps start now, which are
// skipped and why, which running steps are canceled after a failure, and when the pipeline is
// over with which status, naming the step that failed it. It is pure: the pipeline's graph
// (job.PipelineRun) and its steps' states go in, a Decision comes out; the controller's
// pipeline loop applies it and stores every step's state, so a restarted server decides the
// same. It also checks the graph (Check: unknown steps and outputs, cycles), orders it
// (Deps, Order, Layers), computes the step cache key (CacheKey: steps whose definition, code,
// environment and inputs match an earlier successful step reuse that step's outputs) and
// draws it for a terminal (Draw).
package pipeline

// StepState is where a step is, as the pipeline sees it.
type StepState string

const (
	NotStarted StepState = ""          // no run yet
	Queued     StepState = "queued"    // its run exists and has not started
	Running    StepState = "running"   // its run is preparing, running or finalizing
	Completed  StepState = "completed" // its run completed, or its outputs were reused (cache)
	Failed     StepState = "failed"
	Canceled   StepState = "canceled"
	Skipped    StepState = "skipped" // never started: a step it reads from did not complete
)

// State is what the pipeline knows now: each step's state by name (absent = NotStarted), and
// whether the pipeline itself is being canceled.
type State struct {
	Steps     map[string]StepState
	Canceling bool
}

// Decision is what to do now.
type Decision struct {
	Start  []string // steps whose inputs are all ready, in a stable order
	Skip   []Skip   // steps that can never run, with why
	Cancel []string // running or queued steps to cancel (a failure without continue_on_step_failure, or the pipeline canceled)
	// Done says the pipeline has ended: Status is "Completed", "Failed" or "Canceled", and
	// Reason names the failing step(s) ("step train failed; score skipped").
	Done   bool
	Status string
	Reason string
}

// Skip is a step that will not run.
type Skip struct {
	Step   string
	Reason string // e.g. "prep failed"
}
