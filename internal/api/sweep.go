package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// SweepDetail is a sweep job's trials and outcome (job show <sweep>, GET /api/jobs/{name}/trials).
type SweepDetail struct {
	Metric              string `json:"primary_metric"`
	Goal                string `json:"goal"`
	Sampling            string `json:"sampling_algorithm"`
	EarlyTermination    string `json:"early_termination,omitempty"`
	MaxTotalTrials      int    `json:"max_total_trials"`
	MaxConcurrentTrials int    `json:"max_concurrent_trials"`
	// BestChildRunID is Azure's property: the trial with the best primary metric so far.
	BestChildRunID string          `json:"best_child_run_id,omitempty"`
	BestParams     json.RawMessage `json:"best_params,omitempty"`
	BestMetric     *float64        `json:"best_metric,omitempty"`
	// DoneReason says why no more trials start ("" while they may).
	DoneReason string       `json:"done_reason,omitempty"`
	Trials     []SweepTrial `json:"trials"`
}

// SweepTrial is one trial: its run, parameters, primary metric (its series and last value) and
// why the sweep stopped it, if it did.
type SweepTrial struct {
	Index       int             `json:"index"`
	RunID       string          `json:"name"`
	DisplayName string          `json:"display_name,omitempty"`
	Status      job.State       `json:"status"`
	Params      json.RawMessage `json:"params"`
	Metric      *float64        `json:"metric,omitempty"`
	Series      []SweepPoint    `json:"series,omitempty"`
	Stopped     string          `json:"stopped,omitempty"`
}

// SweepPoint is one report of a trial's primary metric.
type SweepPoint struct {
	Step  int64     `json:"step"`
	Value float64   `json:"value"`
	Time  time.Time `json:"time"`
}

// TrialOf says which sweep a run is a trial of (job show <trial>, job list).
type TrialOf struct {
	Sweep   string `json:"sweep"`
	Index   int    `json:"index"`
	Stopped string `json:"stopped,omitempty"`
}

// SweepTrials returns a sweep's trials with their parameters and metric series.
func (c *JobClient) SweepTrials(ctx context.Context, name string) (*SweepDetail, error) {
	return call[SweepDetail](ctx, c.client, http.MethodGet, "/api/jobs/"+url.PathEscape(name)+"/trials", nil)
}
