// Package sweep decides a hyperparameter sweep: which trials to start, which to stop early and
// why, when the sweep is over and which trial is best. It is pure: the sweep's settings and the
// trials' history go in, a Decision comes out; nothing here starts a process, reads a clock or
// keeps state between calls. Everything a decision depends on (the seed, the trials created so
// far, their parameters and metric series) is stored with the runs, so a server restart
// continues the sweep with the same decisions it would have made.
package sweep

import "time"

// Config is a sweep job's settings (Azure ML CLI v2 `type: sweep`), validated by the spec
// decoder before it gets here.
type Config struct {
	Space       Space        `json:"search_space"`
	Sampling    Sampling     `json:"sampling_algorithm"`
	Objective   Objective    `json:"objective"`
	Limits      Limits       `json:"limits"`
	Termination *Termination `json:"early_termination,omitempty"`
}

// Space maps a parameter name to the expression its values are drawn from.
type Space map[string]Expr

// Expr is one search-space expression. Kind is one of choice, randint, uniform, loguniform,
// quniform, qloguniform, normal, lognormal, qnormal, qlognormal (Azure's names). Values are a
// choice's options (float64, int64, string or bool); Upper is randint's exclusive bound; Low and
// High bound the uniform kinds (for the log kinds they are exponents, as in Azure: loguniform
// draws exp(uniform(Low, High))); Mu and Sigma are the normal kinds'; Q rounds the q kinds.
type Expr struct {
	Kind   string  `json:"type"`
	Values []any   `json:"values,omitempty"`
	Upper  int64   `json:"upper,omitempty"`
	Low    float64 `json:"min_value,omitempty"`
	High   float64 `json:"max_value,omitempty"`
	Mu     float64 `json:"mu,omitempty"`
	Sigma  float64 `json:"sigma,omitempty"`
	Q      float64 `json:"q,omitempty"`
}

// Sampling is sampling_algorithm: Type random (Rule "random" or "sobol"), grid or bayesian.
// Seed makes random and bayesian sampling repeatable (the spec decoder fills one when the file
// gives none, so that a restart draws the same values).
type Sampling struct {
	Type string `json:"type"`
	Seed int64  `json:"seed"`
	Rule string `json:"rule,omitempty"`
}

// Objective is the metric the sweep optimizes: Goal "maximize" or "minimize".
type Objective struct {
	Metric string `json:"primary_metric"`
	Goal   string `json:"goal"`
}

// Limits bound the sweep. Zero means no limit, except MaxConcurrentTrials (0: MaxTotalTrials).
type Limits struct {
	MaxTotalTrials      int           `json:"max_total_trials"`
	MaxConcurrentTrials int           `json:"max_concurrent_trials"`
	Timeout             time.Duration `json:"timeout"`
	TrialTimeout        time.Duration `json:"trial_timeout"`
}

// Termination is early_termination. Type is bandit, median_stopping or truncation_selection
// (Azure's), or Hangar's successive halving "asha" (see its fields). EvaluationInterval and
// DelayEvaluation count metric reports (the primary metric's steps), as in Azure.
type Termination struct {
	Type                 string  `json:"type"`
	EvaluationInterval   int     `json:"evaluation_interval,omitempty"`
	DelayEvaluation      int     `json:"delay_evaluation,omitempty"`
	SlackFactor          float64 `json:"slack_factor,omitempty"`
	SlackAmount          float64 `json:"slack_amount,omitempty"`
	TruncationPercentage int     `json:"truncation_percentage,omitempty"`
	// asha: rungs at MinResource·ReductionFactor^k reports, up to MaxResource; a trial
	// continues past a rung only in the top 1/ReductionFactor of the trials that reached it.
	MinResource     int `json:"min_resource,omitempty"`
	MaxResource     int `json:"max_resource,omitempty"`
	ReductionFactor int `json:"reduction_factor,omitempty"`
}

// Params are one trial's values, by parameter name (float64, int64, string or bool).
type Params map[string]any

// TrialState is where a trial is, as the sweep sees it.
type TrialState string

const (
	Queued    TrialState = "queued" // created, not running yet
	Running   TrialState = "running"
	Completed TrialState = "completed"
	Failed    TrialState = "failed"
	Canceled  TrialState = "canceled" // by the user, or stopped early (Stopped says why)
)

// Point is one report of the primary metric.
type Point struct {
	Step  int64   `json:"step"`
	Value float64 `json:"value"`
}

// Trial is one trial's history: Index is its order of creation (0, 1, ...).
type Trial struct {
	Index   int        `json:"index"`
	Params  Params     `json:"params"`
	State   TrialState `json:"state"`
	Metrics []Point    `json:"metrics,omitempty"` // the primary metric, in report order
	Started time.Time  `json:"started"`           // zero while queued
	Ended   time.Time  `json:"ended"`             // zero while not ended
	Stopped string     `json:"stopped,omitempty"` // why the sweep stopped it, if it did
}

// State is what the sweep knows now.
type State struct {
	Trials  []Trial
	Started time.Time // when the sweep started
	Now     time.Time
}

// Decision is what to do now.
type Decision struct {
	// Start are new trials' parameters, created in this order (their Index follows the last).
	Start []Params
	// Stop are running or queued trials to stop, each with the reason shown to the user.
	Stop []Stop
	// Done says the sweep is over once the trials still running end (no more will start);
	// Reason says why (e.g. "max_total_trials 20 reached", "the grid is exhausted").
	Done   bool
	Reason string
}

// Stop is a trial stopped by the sweep.
type Stop struct {
	Index  int
	Reason string
}
