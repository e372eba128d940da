package api

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// PipelineDetail is a pipeline job's steps and outcome (job show <pipeline>, GET
// /api/jobs/{name}/steps): enough to draw the graph with each step's state.
type PipelineDetail struct {
	// Reason says why the pipeline ended as it did, naming the failing step ("" while running).
	Reason string         `json:"reason,omitempty"`
	Steps  []PipelineStep `json:"steps"`
}

// PipelineStep is one step: its place in the graph (the steps it reads from), its run, and
// whether its outputs were reused from an earlier run (the step cache).
type PipelineStep struct {
	Name      string   `json:"name"`
	Group     string   `json:"group,omitempty"`     // the nested pipeline step it came from
	Component string   `json:"component,omitempty"` // "name:version", a file, or "" (inline)
	Type      string   `json:"type"`                // command, parallel, sweep
	Compute   string   `json:"compute"`
	Deps      []string `json:"deps,omitempty"` // the steps whose outputs it reads
	// State is the pipeline's view: "", queued, running, completed, failed, canceled, skipped.
	State string `json:"state"`
	// RunID is the step's run (absent before it starts, and for a skipped step). A reused step
	// has no run of its own: ReusedFrom names the earlier run whose outputs it took.
	RunID      string     `json:"run_id,omitempty"`
	Status     job.State  `json:"status,omitempty"` // the run's own status
	ReusedFrom string     `json:"reused_from,omitempty"`
	Reason     string     `json:"reason,omitempty"` // why skipped, failed or canceled
	Started    *time.Time `json:"started,omitempty"`
	Ended      *time.Time `json:"ended,omitempty"`
}

// PipelineOf says which pipeline a run is a step of (job show <step>, job list).
type PipelineOf struct {
	Pipeline string `json:"pipeline"`
	Step     string `json:"step"`
}

// PipelineSteps returns a pipeline job's steps with their states.
func (c *JobClient) PipelineSteps(ctx context.Context, name string) (*PipelineDetail, error) {
	return call[PipelineDetail](ctx, c.client, http.MethodGet, "/api/jobs/"+url.PathEscape(name)+"/steps", nil)
}
