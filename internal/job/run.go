package job

import (
	"encoding/json"
	"time"
)

// Run is one execution of a job on a compute target.
type Run struct {
	ID             string            `json:"name"`
	DisplayName    string            `json:"display_name,omitempty"`
	ExperimentName string            `json:"experiment_name,omitempty"`
	Description    string            `json:"description,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	Compute        string            `json:"compute"`
	Status         State             `json:"status"`
	// StatusReason says why the run is in its status (why it waits, why it failed).
	StatusReason string     `json:"status_reason,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	StartedAt    *time.Time `json:"started_at"`
	EndedAt      *time.Time `json:"ended_at"`
	ExitCode     *int       `json:"exit_code"`
	Warnings     []string   `json:"warnings"`
	Spec         Spec       `json:"spec"`
	// Timings are durations in seconds reported by the supervisor for work inside a phase
	// (e.g. "environment": building or fetching the environment during Preparing).
	Timings map[string]float64 `json:"timings,omitempty"`

	// Attempt counts the run's executions: a run requeued after losing its node runs again.
	Attempt int `json:"attempt"`
	// Placement is where the current attempt was placed, on a target that places runs on nodes
	// itself (nil elsewhere, and until it is placed). The store keeps it beside the run for its
	// attempt: it is read with the run and written with store.SetPlacement only.
	Placement *Placement `json:"-"`

	// Fields below are the server's own bookkeeping; not part of the public view.
	Handle        json.RawMessage   `json:"-"` // the backend's serialisable handle
	TokenHash     string            `json:"-"`
	LastHeartbeat time.Time         `json:"-"`
	CancelSent    bool              `json:"-"`
	ArtifactsHash string            `json:"-"` // manifest of the artifact store (outputs/, logs/, user_logs/ ...)
	NamedOutputs  map[string]string `json:"-"` // output name → manifest hash
}

// Event is one status transition of a run.
type Event struct {
	Time   time.Time `json:"time"`
	From   State     `json:"from,omitempty"`
	To     State     `json:"status"`
	Reason string    `json:"reason,omitempty"`
}

// Metric is one logged value of a run's metric.
type Metric struct {
	Seq   int64     `json:"seq"`
	Name  string    `json:"name"`
	Value float64   `json:"value"`
	Step  int64     `json:"step"`
	Time  time.Time `json:"timestamp"`
}

// LogLine is one line of a run's log file, numbered from 1.
type LogLine struct {
	Seq  int64     `json:"seq"`
	Text string    `json:"text"`
	Time time.Time `json:"time,omitempty"`
}
