package sweep

import (
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"valid", func(*Config) {}, ""},
		{"unknown expression", func(c *Config) { c.Space["lr"] = Expr{Kind: "gamma"} },
			`search_space.lr.type: "gamma" is not a search-space expression (choice, randint, uniform, loguniform, quniform, qloguniform, normal, lognormal, qnormal, qlognormal)`},
		{"empty choice", func(c *Config) { c.Space["depth"] = Expr{Kind: "choice"} }, "search_space.depth.values: at least one value is needed"},
		{"repeated choice", func(c *Config) { c.Space["depth"] = Expr{Kind: "choice", Values: []any{int64(2), 2.0}} },
			"search_space.depth.values[1]: repeats values[0]"},
		{"nested choice", func(c *Config) { c.Space["depth"] = Expr{Kind: "choice", Values: []any{map[string]any{}}} },
			"search_space.depth.values[0]: map[string]interface {} is not a number, string or bool (nested search spaces are not supported)"},
		{"q missing", func(c *Config) { c.Space["lr"] = Expr{Kind: "quniform", Low: 0, High: 1} }, "search_space.lr.q: 0 is not a positive number"},
		{"sigma", func(c *Config) { c.Space["lr"] = Expr{Kind: "normal", Sigma: 0} }, "search_space.lr.sigma: 0 is not a positive number"},
		{"randint", func(c *Config) { c.Space["lr"] = Expr{Kind: "randint"} }, "search_space.lr.upper: 0 is not at least 1"},
		{"grid of uniform", func(c *Config) { c.Sampling = Sampling{Type: "grid"} },
			"sampling_algorithm.type: grid sampling needs choice expressions, search_space.lr is loguniform"},
		{"rule", func(c *Config) { c.Sampling.Rule = "halton" }, `sampling_algorithm.rule: "halton" is not random or sobol`},
		{"sampling type", func(c *Config) { c.Sampling.Type = "evolution" }, `sampling_algorithm.type: "evolution" is not random, grid or bayesian`},
		{"goal", func(c *Config) { c.Objective.Goal = "max" }, `objective.goal: "max" is not maximize or minimize`},
		{"metric", func(c *Config) { c.Objective.Metric = "" }, "objective.primary_metric: a metric name is needed"},
		{"limits", func(c *Config) { c.Limits.MaxConcurrentTrials = -1 }, "limits.max_concurrent_trials: must not be negative"},
		{"bandit needs a slack", func(c *Config) { c.Termination = &Termination{Type: "bandit"} },
			"early_termination.slack_factor: give either slack_factor or slack_amount, a positive number"},
		{"truncation", func(c *Config) { c.Termination = &Termination{Type: "truncation_selection", TruncationPercentage: 100} },
			"early_termination.truncation_percentage: 100 is not between 1 and 99"},
		{"asha eta", func(c *Config) { c.Termination = &Termination{Type: "asha", ReductionFactor: 1} },
			"early_termination.reduction_factor: 1 is not at least 2"},
		{"asha max", func(c *Config) { c.Termination = &Termination{Type: "ASHA", MinResource: 4, MaxResource: 2} },
			"early_termination.max_resource: 2 is below min_resource 4"},
		{"policy", func(c *Config) { c.Termination = &Termination{Type: "hyperband"} },
			`early_termination.type: "hyperband" is not bandit, median_stopping, truncation_selection or asha`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.Space = Space{"lr": cfg.Space["lr"], "depth": cfg.Space["depth"]}
			tt.edit(&cfg)
			err := cfg.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
		})
	}
}
