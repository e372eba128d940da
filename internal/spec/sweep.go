package spec

import (
	"crypto/rand"
	"encoding/binary"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/sweep"
)

// Azure's bounds and defaults of a sweep job (sweepJob.schema.json, SPEC.md §4).
const (
	MaxSweepTrials            = 1000
	DefaultEvaluationInterval = 1
)

// sweepKeys are the keys --set may create in a sweep job.
var sweepKeys = []string{
	"trial.command", "trial.code", "trial.environment", "trial.environment_variables.*",
	"trial.resources.instance_count", "trial.resources.instance_type", "trial.distribution.type",
	"sampling_algorithm", "sampling_algorithm.type", "sampling_algorithm.seed", "sampling_algorithm.rule",
	"objective.goal", "objective.primary_metric",
	"limits.max_total_trials", "limits.max_concurrent_trials", "limits.trial_timeout",
	"early_termination.type", "early_termination.evaluation_interval", "early_termination.delay_evaluation",
	"early_termination.slack_factor", "early_termination.slack_amount", "early_termination.truncation_percentage",
}

// RandomSeed chooses a sweep's seed when its file gives none; the seed is stored with the run,
// so that a server restart draws the same values. Tests replace it.
var RandomSeed = func() int64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 1
	}
	return int64(binary.LittleEndian.Uint64(b[:])>>2) + 1
}

// sweepJob decodes a `type: sweep` job: the sweep's settings in s.Sweep, its trial as the
// rest of s (a command job whose command may use ${{search_space.<name>}}).
func (d *sweepDecoder) sweepJob(root *yaml.Node) *job.Spec {
	s := &job.Spec{Type: "sweep", Sweep: &job.SweepRun{}}
	common := d.jobs.jobFields(s)
	fs := fields{"trial": nil, "search_space": nil, "sampling_algorithm": nil, "objective": nil,
		"limits": nil, "early_termination": nil}
	for _, k := range []string{"$schema", "type", "name", "display_name", "experiment_name", "description",
		"tags", "properties", "compute", "inputs", "outputs", "identity", "queue_settings", "services",
		"status", "creation_context", "id"} {
		fs[k] = common[k]
	}
	got := d.mapping(root, "", fs)
	cfg := &s.Sweep.Config
	if n := got["search_space"]; n == nil {
		d.required(nil, "search_space")
	} else {
		cfg.Space = d.searchSpace(n, "search_space")
	}
	d.sampling(got["sampling_algorithm"], cfg)
	d.objective(got["objective"], cfg)
	d.sweepLimits(got["limits"], s)
	if n := got["early_termination"]; n != nil {
		cfg.Termination = d.termination(n, "early_termination", cfg)
	}
	for name := range cfg.Space {
		if _, dup := s.Inputs[name]; dup {
			d.errorf(keyNode(got["search_space"], name), "search_space."+name, "name %s is also used by an input", quote(name))
		}
	}
	if n := got["trial"]; n == nil {
		d.required(nil, "trial")
	} else {
		d.trial(n, got, s)
	}
	if s.ExperimentName == "" {
		s.ExperimentName = defaultExperiment(d.baseDir)
	}
	if s.Resources.InstanceCount == 0 {
		s.Resources.InstanceCount = 1
	}
	return s
}

// sampling decodes sampling_algorithm: a name, or {type, seed, rule, logbase}; it checks the
// search space's kinds against the algorithm (Azure's rules) and fills a seed.
func (d *sweepDecoder) sampling(n *yaml.Node, cfg *sweep.Config) {
	const path = "sampling_algorithm"
	algos := []string{"random", "grid", "bayesian"}
	smp := &cfg.Sampling
	seeded := false
	switch {
	case n == nil:
		d.required(nil, path)
		return
	case n.Kind == yaml.ScalarNode:
		smp.Type = d.enum(n, path, algos...)
	case n.Kind == yaml.MappingNode:
		got := d.mapping(n, path, fields{
			"type": func(v *yaml.Node, p string) { smp.Type = d.enum(v, p, algos...) },
			"seed": func(v *yaml.Node, p string) { smp.Seed, seeded = d.integer(v, p) },
			"rule": func(v *yaml.Node, p string) { smp.Rule = d.enum(v, p, "random", "sobol") },
			"logbase": func(v *yaml.Node, p string) {
				if s := d.str(v, p); s != "e" {
					d.number(v, p)
				}
			},
		})
		if got["type"] == nil {
			d.required(n, join(path, "type"))
		}
		if smp.Type != "random" && smp.Type != "" {
			for _, k := range []string{"rule", "logbase"} {
				if v := got[k]; v != nil {
					d.errorf(v, join(path, k), "only random sampling takes %s", k)
				}
			}
		}
	default:
		d.expected(n, path, "random, grid, bayesian or a sampling object")
		return
	}
	if smp.Type == "random" && smp.Rule == "" {
		smp.Rule = "random"
	}
	if !seeded && smp.Type != "grid" && smp.Type != "" {
		smp.Seed = RandomSeed()
	}
	allowed := map[string][]string{"grid": {"choice"}, "bayesian": {"choice", "uniform", "quniform"}}[smp.Type]
	for _, name := range slices.Sorted(mapKeysOf(cfg.Space)) {
		if e := cfg.Space[name]; allowed != nil && !slices.Contains(allowed, e.Kind) {
			d.errorf(n, "search_space."+name, "%s sampling takes only %s expressions, not %s", smp.Type, strings.Join(allowed, ", "), e.Kind)
		}
	}
}

func seconds(s int64) time.Duration { return time.Duration(s) * time.Second }

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// objective decodes {goal, primary_metric}.
func (d *sweepDecoder) objective(n *yaml.Node, cfg *sweep.Config) {
	const path = "objective"
	if n == nil {
		d.required(nil, path)
		return
	}
	got := d.mapping(n, path, fields{
		"goal":           func(v *yaml.Node, p string) { cfg.Objective.Goal = d.enum(v, p, "maximize", "minimize") },
		"primary_metric": func(v *yaml.Node, p string) { cfg.Objective.Metric = strings.TrimSpace(d.str(v, p)) },
	})
	for _, k := range []string{"goal", "primary_metric"} {
		if got[k] == nil {
			d.required(n, join(path, k))
		}
	}
	if v := got["primary_metric"]; v != nil && cfg.Objective.Metric == "" {
		d.errorf(v, join(path, "primary_metric"), "must not be empty")
	}
}

// sweepLimits decodes limits: max_total_trials (1..1000, default 1000), max_concurrent_trials
// (default max_total_trials), timeout and trial_timeout in seconds; trial_timeout becomes each
// trial's own limits.timeout.
func (d *sweepDecoder) sweepLimits(n *yaml.Node, s *job.Spec) {
	l := &s.Sweep.Config.Limits
	if n != nil {
		d.mapping(n, "limits", fields{
			"max_total_trials": func(v *yaml.Node, p string) {
				if t, ok := d.intAtLeast(v, p, 1); ok && t > MaxSweepTrials {
					d.errorf(v, p, "expected integer <= %d, got %d", MaxSweepTrials, t)
				} else {
					l.MaxTotalTrials = int(t)
				}
			},
			"max_concurrent_trials": func(v *yaml.Node, p string) { l.MaxConcurrentTrials = d.smallInt(v, p, 1) },
			"timeout":               func(v *yaml.Node, p string) { l.Timeout = seconds(d.jobs.timeout(v, p)) },
			"trial_timeout": func(v *yaml.Node, p string) {
				secs := d.jobs.timeout(v, p)
				l.TrialTimeout, s.Limits.TimeoutSeconds = seconds(secs), secs
			},
		})
	}
	if l.MaxTotalTrials == 0 {
		l.MaxTotalTrials = MaxSweepTrials
	}
	if l.MaxConcurrentTrials == 0 || l.MaxConcurrentTrials > l.MaxTotalTrials {
		l.MaxConcurrentTrials = l.MaxTotalTrials
	}
}

// termination decodes early_termination (Azure's bandit, median_stopping and
// truncation_selection; Hangar's asha).
func (d *sweepDecoder) termination(n *yaml.Node, path string, cfg *sweep.Config) *sweep.Termination {
	t := &sweep.Termination{EvaluationInterval: DefaultEvaluationInterval}
	intField := func(dst *int, lo int64) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) { *dst = d.smallInt(v, p, lo) }
	}
	numField := func(dst *float64) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) {
			if f, ok := d.number(v, p); ok && f <= 0 {
				d.expected(v, p, "a number > 0")
			} else {
				*dst = f
			}
		}
	}
	kinds := []string{"bandit", "median_stopping", "truncation_selection", "asha"}
	got := d.mapping(n, path, fields{
		"type":                  func(v *yaml.Node, p string) { t.Type = d.enum(v, p, kinds...) },
		"evaluation_interval":   intField(&t.EvaluationInterval, 1),
		"delay_evaluation":      intField(&t.DelayEvaluation, 0),
		"slack_factor":          numField(&t.SlackFactor),
		"slack_amount":          numField(&t.SlackAmount),
		"truncation_percentage": intField(&t.TruncationPercentage, 1),
		"exclude_finished_jobs": func(v *yaml.Node, p string) { d.boolean(v, p) },
		"min_resource":          intField(&t.MinResource, 1),
		"max_resource":          intField(&t.MaxResource, 1),
		"reduction_factor":      intField(&t.ReductionFactor, 2),
	})
	if got["type"] == nil {
		d.required(n, join(path, "type"))
		return t
	}
	only := map[string][]string{
		"bandit":               {"slack_factor", "slack_amount"},
		"truncation_selection": {"truncation_percentage", "exclude_finished_jobs"},
		"asha":                 {"min_resource", "max_resource", "reduction_factor"},
	}
	for kind, keys := range only {
		for _, k := range keys {
			if v := got[k]; v != nil && t.Type != kind && t.Type != "" {
				d.errorf(v, join(path, k), "only %s takes %s", kind, k)
			}
		}
	}
	d.checkTermination(n, path, got, t, cfg)
	return t
}

// checkTermination applies the rules that span a policy's fields.
func (d *sweepDecoder) checkTermination(n *yaml.Node, path string, got map[string]*yaml.Node, t *sweep.Termination, cfg *sweep.Config) {
	switch t.Type {
	case "bandit":
		switch sf, sa := got["slack_factor"], got["slack_amount"]; {
		case sf == nil && sa == nil:
			d.errorf(n, join(path, "slack_factor"), "bandit needs slack_factor or slack_amount")
		case sf != nil && sa != nil:
			d.errorf(sa, join(path, "slack_amount"), "give slack_factor or slack_amount, not both")
		}
	case "truncation_selection":
		if v := got["truncation_percentage"]; v == nil {
			d.required(n, join(path, "truncation_percentage"))
		} else if t.TruncationPercentage > 99 {
			d.errorf(v, join(path, "truncation_percentage"), "expected integer 1..99, got %d", t.TruncationPercentage)
		}
	case "asha":
		if t.MinResource == 0 {
			t.MinResource = 1
		}
		if t.ReductionFactor == 0 {
			t.ReductionFactor = 3
		}
		if v := got["max_resource"]; v != nil && t.MaxResource < t.MinResource {
			d.errorf(v, join(path, "max_resource"), "must be >= min_resource (%d)", t.MinResource)
		}
	}
	if cfg.Sampling.Type == "bayesian" && t.Type != "asha" && t.Type != "" {
		d.errorf(got["type"], join(path, "type"), "bayesian sampling takes no early termination policy (Azure's rule); use random sampling, or Hangar's asha")
	}
}

// searchSpace decodes search_space: a name → expression map.
func (d *sweepDecoder) searchSpace(n *yaml.Node, path string) sweep.Space {
	space := sweep.Space{}
	pairs := d.entries(n, path)
	if len(pairs) == 0 && n.Kind == yaml.MappingNode {
		d.errorf(n, path, "expected at least one parameter")
	}
	for _, p := range pairs {
		ep := join(path, p.key.Value)
		d.jobs.checkName(p.key, ep)
		if e, ok := d.expression(resolve(p.value), ep); ok {
			space[p.key.Value] = e
		}
	}
	return space
}

// exprKinds are each expression kind's fields besides type.
var exprKinds = map[string][]string{
	"choice": {"values"}, "randint": {"upper"},
	"uniform": {"min_value", "max_value"}, "loguniform": {"min_value", "max_value"},
	"quniform": {"min_value", "max_value", "q"}, "qloguniform": {"min_value", "max_value", "q"},
	"normal": {"mu", "sigma"}, "lognormal": {"mu", "sigma"},
	"qnormal": {"mu", "sigma", "q"}, "qlognormal": {"mu", "sigma", "q"},
}

// expression decodes one search-space expression (Azure's YAML form, {type: ..., ...}).
func (d *sweepDecoder) expression(n *yaml.Node, path string) (sweep.Expr, bool) {
	var e sweep.Expr
	if n == nil || n.Kind != yaml.MappingNode {
		d.expected(n, path, "an expression like {type: choice, values: [...]} or {type: uniform, min_value: 0, max_value: 1}")
		return e, false
	}
	errs := len(d.errs)
	kinds := slices.Sorted(mapKeysOf(exprKinds))
	if t := lookup(n, "type"); t == nil || isNull(t) {
		d.required(n, join(path, "type"))
		return e, false
	} else if e.Kind = d.enum(t, join(path, "type"), kinds...); e.Kind == "" {
		return e, false
	}
	num := func(dst *float64) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) { *dst, _ = d.number(v, p) }
	}
	fs := fields{"type": nil, "values": func(v *yaml.Node, p string) { e.Values = d.choiceValues(v, p) },
		"upper":     func(v *yaml.Node, p string) { e.Upper, _ = d.intAtLeast(v, p, 1) },
		"min_value": num(&e.Low), "max_value": num(&e.High), "mu": num(&e.Mu), "sigma": num(&e.Sigma), "q": num(&e.Q)}
	mine := exprKinds[e.Kind]
	for k := range fs {
		if k != "type" && !slices.Contains(mine, k) {
			delete(fs, k)
		}
	}
	got := d.mapping(n, path, fs)
	for _, k := range mine {
		if got[k] == nil {
			d.required(n, join(path, k))
		}
	}
	switch {
	case got["max_value"] != nil && got["min_value"] != nil && e.High <= e.Low:
		d.errorf(got["max_value"], join(path, "max_value"), "must be greater than min_value (%v)", e.Low)
	case got["sigma"] != nil && e.Sigma <= 0:
		d.expected(got["sigma"], join(path, "sigma"), "a number > 0")
	}
	if q := got["q"]; q != nil && e.Q <= 0 {
		d.expected(q, join(path, "q"), "a number > 0")
	}
	return e, len(d.errs) == errs
}

// choiceValues decodes a choice's values: a non-empty list of numbers, strings or booleans.
func (d *sweepDecoder) choiceValues(n *yaml.Node, path string) []any {
	var out []any
	for ip, c := range d.nonEmptyList(n, path, "a non-empty list of values") {
		c = resolve(c)
		if c == nil || c.Kind != yaml.ScalarNode || isNull(c) {
			if c != nil && c.Kind == yaml.MappingNode {
				d.errorf(c, ip, "nested (conditional) search spaces are not supported; give numbers, strings or booleans")
				continue
			}
			d.expected(c, ip, "a number, string or boolean")
			continue
		}
		out = append(out, scalarValue(c))
	}
	return out
}
