package sweep

import (
	"fmt"
	"math"
	"strings"
)

// Validate checks what Decide relies on and names the field at fault, e.g.
// "search_space.lr.max_value: 1 is below min_value 2". The spec decoder may check more (the
// trial, the compute); this is the engine's own contract.
func (c Config) Validate() error {
	c = c.normalized()
	if len(c.Space) == 0 {
		return fmt.Errorf("search_space: at least one parameter is needed")
	}
	for _, name := range c.Space.names() {
		if err := c.Space[name].validate(); err != nil {
			return fmt.Errorf("search_space.%s.%w", name, err)
		}
	}
	if err := c.validateSampling(); err != nil {
		return fmt.Errorf("sampling_algorithm.%w", err)
	}
	if c.Objective.Metric == "" {
		return fmt.Errorf("objective.primary_metric: a metric name is needed")
	}
	if g := c.Objective.Goal; g != "maximize" && g != "minimize" {
		return fmt.Errorf("objective.goal: %q is not maximize or minimize", g)
	}
	l := c.Limits
	for _, f := range []struct {
		name string
		bad  bool
	}{
		{"max_total_trials", l.MaxTotalTrials < 0}, {"max_concurrent_trials", l.MaxConcurrentTrials < 0},
		{"timeout", l.Timeout < 0}, {"trial_timeout", l.TrialTimeout < 0},
	} {
		if f.bad {
			return fmt.Errorf("limits.%s: must not be negative", f.name)
		}
	}
	if c.Termination != nil {
		if err := c.Termination.validate(); err != nil {
			return fmt.Errorf("early_termination.%w", err)
		}
	}
	return nil
}

// normalized lowercases the names YAML users may capitalize (Azure accepts "Maximize").
func (c Config) normalized() Config {
	c.Sampling.Type = strings.ToLower(c.Sampling.Type)
	c.Sampling.Rule = strings.ToLower(c.Sampling.Rule)
	c.Objective.Goal = strings.ToLower(c.Objective.Goal)
	if c.Termination != nil {
		t := *c.Termination
		t.Type = strings.ToLower(t.Type)
		c.Termination = &t
	}
	return c
}

func (c Config) validateSampling() error {
	s := c.Sampling
	switch s.Type {
	case "random":
		switch s.Rule {
		case "", "random":
		case "sobol":
			if len(c.Space) > sobolDims {
				return fmt.Errorf("rule: sobol supports at most %d parameters, the space has %d", sobolDims, len(c.Space))
			}
		default:
			return fmt.Errorf("rule: %q is not random or sobol", s.Rule)
		}
	case "grid", "bayesian":
		if s.Rule != "" {
			return fmt.Errorf("rule: only sampling type random takes a rule")
		}
		if s.Type == "grid" {
			for _, name := range c.Space.names() {
				if k := c.Space[name].Kind; k != "choice" {
					return fmt.Errorf("type: grid sampling needs choice expressions, search_space.%s is %s", name, k)
				}
			}
		}
	default:
		return fmt.Errorf("type: %q is not random, grid or bayesian", s.Type)
	}
	return nil
}

func (e Expr) validate() error {
	switch e.Kind {
	case "choice":
		if len(e.Values) == 0 {
			return fmt.Errorf("values: at least one value is needed")
		}
		seen := map[string]int{}
		for i, v := range e.Values {
			if _, ok := number(v); !ok {
				switch v.(type) {
				case string, bool:
				default:
					return fmt.Errorf("values[%d]: %T is not a number, string or bool (nested search spaces are not supported)", i, v)
				}
			}
			if j, dup := seen[valueKey(v)]; dup {
				return fmt.Errorf("values[%d]: repeats values[%d]", i, j)
			}
			seen[valueKey(v)] = i
		}
	case "randint":
		if e.Upper < 1 {
			return fmt.Errorf("upper: %d is not at least 1", e.Upper)
		}
	case "uniform", "quniform", "loguniform", "qloguniform":
		if !finite(e.Low) || !finite(e.High) || e.High < e.Low {
			return fmt.Errorf("max_value: %g is below min_value %g", e.High, e.Low)
		}
	case "normal", "qnormal", "lognormal", "qlognormal":
		if !finite(e.Mu) || !finite(e.Sigma) || e.Sigma <= 0 {
			return fmt.Errorf("sigma: %g is not a positive number", e.Sigma)
		}
	default:
		return fmt.Errorf("type: %q is not a search-space expression (choice, randint, uniform, loguniform, quniform, qloguniform, normal, lognormal, qnormal, qlognormal)", e.Kind)
	}
	if e.isQ() && (!finite(e.Q) || e.Q <= 0) {
		return fmt.Errorf("q: %g is not a positive number", e.Q)
	}
	return nil
}

func (t Termination) validate() error {
	if t.EvaluationInterval < 0 || t.DelayEvaluation < 0 {
		return fmt.Errorf("evaluation_interval: neither it nor delay_evaluation may be negative")
	}
	switch t.Type {
	case "bandit":
		if (t.SlackFactor > 0) == (t.SlackAmount > 0) || t.SlackFactor < 0 || t.SlackAmount < 0 {
			return fmt.Errorf("slack_factor: give either slack_factor or slack_amount, a positive number")
		}
	case "median_stopping":
	case "truncation_selection":
		if t.TruncationPercentage < 1 || t.TruncationPercentage > 99 {
			return fmt.Errorf("truncation_percentage: %d is not between 1 and 99", t.TruncationPercentage)
		}
	case "asha":
		a := t.asha()
		if a.MinResource < 1 {
			return fmt.Errorf("min_resource: %d is not at least 1", t.MinResource)
		}
		if a.ReductionFactor < 2 {
			return fmt.Errorf("reduction_factor: %d is not at least 2", t.ReductionFactor)
		}
		if a.MaxResource != 0 && a.MaxResource < a.MinResource {
			return fmt.Errorf("max_resource: %d is below min_resource %d", t.MaxResource, a.MinResource)
		}
	default:
		return fmt.Errorf("type: %q is not bandit, median_stopping, truncation_selection or asha", t.Type)
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
