package spec

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pattern"
)

// Defaults of a parallel job (Azure's parallelJob schema).
const (
	DefaultMiniBatchSize   = 10
	DefaultMaxRetries      = 3
	DefaultParallelTimeout = 60
	DefaultLoggingLevel    = "INFO"
)

// parallelKeys are the keys --set may create in a parallel job.
var parallelKeys = []string{
	"input_data", "mini_batch_size", "max_concurrency_per_instance", "mini_batch_error_threshold",
	"error_threshold", "logging_level", "retry_settings.max_retries", "retry_settings.timeout",
	"partition_keys", "task.type", "task.code", "task.entry_script", "task.program_arguments", "task.append_row_to",
}

var (
	// A binding is the whole of input_data or append_row_to: ${{inputs.x}} / ${{outputs.y}}.
	inputBinding  = pattern.New(`^\$\{\{\s*inputs\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$`)
	outputBinding = pattern.New(`^\$\{\{\s*outputs\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$`)
	sizeBatch     = pattern.New(`^(?i)\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|k|m|g)\s*$`)
)

// parallelJob decodes a `type: parallel` job: the settings of Hangar's parallel driver in
// s.Parallel, task.code and task.environment as a command job's code and environment. The
// server turns it into a command job (internal/parallel).
func (d *parallelDecoder) parallelJob(root *yaml.Node) *job.Spec {
	s := &job.Spec{Type: "parallel"}
	p := &job.ParallelRun{MiniBatchSize: DefaultMiniBatchSize, MaxConcurrencyPerInstance: 1,
		MiniBatchErrorThreshold: -1, ErrorThreshold: -1, MaxRetries: DefaultMaxRetries,
		TimeoutSeconds: DefaultParallelTimeout, LoggingLevel: DefaultLoggingLevel}
	s.Parallel = p
	common := d.jobs.jobFields(s)
	fs := fields{
		"mini_batch_size": func(n *yaml.Node, path string) {
			if count, bytes := d.miniBatchSize(n, path); count > 0 || bytes > 0 {
				p.MiniBatchSize, p.MiniBatchBytes = count, bytes
			}
		},
		"max_concurrency_per_instance": func(n *yaml.Node, path string) { p.MaxConcurrencyPerInstance = d.smallInt(n, path, 1) },
		"mini_batch_error_threshold":   func(n *yaml.Node, path string) { p.MiniBatchErrorThreshold = d.smallInt(n, path, -1) },
		"error_threshold":              func(n *yaml.Node, path string) { p.ErrorThreshold = d.smallInt(n, path, -1) },
		"logging_level": func(n *yaml.Node, path string) {
			p.LoggingLevel = strings.ToUpper(d.enum(n, path, "debug", "info", "warning", "error", "critical"))
		},
		"retry_settings": func(n *yaml.Node, path string) { d.retrySettings(n, path, p) },
		"partition_keys": func(n *yaml.Node, path string) { p.PartitionKeys = d.partitionKeys(n, path) },
		"input_data":     nil,
		"task":           nil,
	}
	for _, k := range []string{"$schema", "type", "name", "display_name", "experiment_name", "description",
		"tags", "properties", "compute", "inputs", "outputs", "resources", "environment_variables",
		"identity", "queue_settings"} {
		fs[k] = common[k]
	}
	got := d.mapping(root, "", fs)
	d.parallelTask(got["task"], s)
	d.checkParallel(got, s)
	return s
}

// miniBatchSize reads a number of files per mini-batch, or Azure's size form ("10kb", "1mb",
// "100MB": bytes per mini-batch, 1kb = 1024 bytes), which it returns as bytes with count 0.
func (d *parallelDecoder) miniBatchSize(n *yaml.Node, path string) (count int, bytes int64) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		v := strings.TrimSpace(n.Value)
		if i, err := strconv.Atoi(v); err == nil && i >= 1 {
			return i, 0
		}
		if b, ok := parseBatchBytes(v); ok {
			return 0, b
		}
		d.errorf(n, path, "%s is not a count or a size like \"10kb\"", quote(v))
		return 0, 0
	}
	return d.smallInt(n, path, 1), 0
}

// batchUnits are the multipliers of a mini-batch size's units.
var batchUnits = map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}

// parseBatchBytes reads a size like "10kb" or "1.5 MB" (at least one byte, at most 1 TiB).
func parseBatchBytes(v string) (int64, bool) {
	m := sizeBatch.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	b := f * batchUnits[strings.ToLower(m[2])]
	if err != nil || b < 1 || b > 1<<40 {
		return 0, false
	}
	return int64(b), true
}

// partitionKeys reads partition_keys: column names, each once.
func (d *parallelDecoder) partitionKeys(n *yaml.Node, path string) []string {
	var out []string
	for ip, c := range d.nonEmptyList(n, path, "a list of column names") {
		k := strings.TrimSpace(d.str(c, ip))
		if k == "" || slices.Contains(out, k) {
			d.expected(c, ip, "a column name, each once")
			continue
		}
		out = append(out, k)
	}
	return out
}

func (d *parallelDecoder) retrySettings(n *yaml.Node, path string, p *job.ParallelRun) {
	d.mapping(n, path, fields{
		"max_retries": func(v *yaml.Node, vp string) { p.MaxRetries = d.smallInt(v, vp, 0) },
		"timeout":     func(v *yaml.Node, vp string) { p.TimeoutSeconds = int(d.jobs.timeout(v, vp)) },
	})
}

// parallelTask decodes `task:` (only run_function).
func (d *parallelDecoder) parallelTask(n *yaml.Node, s *job.Spec) {
	if n == nil {
		d.required(nil, "task")
		return
	}
	p := s.Parallel
	got := d.mapping(n, "task", fields{
		"type":              func(v *yaml.Node, path string) { d.enum(v, path, "run_function") },
		"code":              func(v *yaml.Node, path string) { s.Code = d.jobs.jobCode(v, path) },
		"entry_script":      func(v *yaml.Node, path string) { p.EntryScript = d.str(v, path) },
		"environment":       func(v *yaml.Node, path string) { s.Environment = d.assets.jobEnvironment(v, path) },
		"program_arguments": func(v *yaml.Node, path string) { p.ProgramArguments = d.str(v, path) },
		"append_row_to":     nil,
	})
	switch e := got["entry_script"]; {
	case e == nil:
		d.required(n, "task.entry_script")
	case !safeRelative(p.EntryScript):
		d.expected(e, "task.entry_script", "a path relative to task.code, without ..")
	}
	if got["code"] == nil {
		d.required(n, "task.code")
	}
	if a := got["append_row_to"]; a != nil {
		m := outputBinding.FindStringSubmatch(d.str(a, "task.append_row_to"))
		if m == nil {
			d.expected(a, "task.append_row_to", "${{outputs.<name>}}")
		} else if _, ok := s.Outputs[m[1]]; !ok {
			d.errorf(a, "task.append_row_to", "unknown output %s; known: %s", quote(m[1]), listOrNone(keys(s.Outputs)))
		} else {
			p.AppendRowTo = m[1]
		}
	}
	if a := got["program_arguments"]; a != nil {
		d.checkArguments(a, s)
	}
}

// checkParallel checks input_data and the rules that span fields, and applies the defaults.
func (d *parallelDecoder) checkParallel(got map[string]*yaml.Node, s *job.Spec) {
	switch n := got["input_data"]; {
	case n == nil:
		d.required(nil, "input_data")
	default:
		m := inputBinding.FindStringSubmatch(d.str(n, "input_data"))
		if m == nil {
			d.expected(n, "input_data", "${{inputs.<name>}}")
			break
		}
		in, ok := s.Inputs[m[1]]
		switch {
		case !ok:
			d.errorf(n, "input_data", "unknown input %s; known: %s", quote(m[1]), listOrNone(keys(s.Inputs)))
		case in.Type != job.URIFolder && in.Type != job.URIFile && in.Type != job.MLTable:
			d.errorf(n, "input_data", "input %s is %s; a parallel job splits a uri_folder, a uri_file or an mltable into mini-batches", quote(m[1]), in.Type)
		case len(s.Parallel.PartitionKeys) > 0 && in.Type != job.MLTable:
			d.errorf(got["partition_keys"], "partition_keys", "input %s is %s; partitions are of an mltable's rows", quote(m[1]), in.Type)
		default:
			s.Parallel.InputData = m[1]
		}
	}
	d.jobs.checkShared(got, s)
}

// checkArguments checks task.program_arguments' references as a command's are checked.
func (d *parallelDecoder) checkArguments(n *yaml.Node, s *job.Spec) {
	const path = "task.program_arguments"
	uses, err := binding.Uses(s.Parallel.ProgramArguments)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return
	}
	for _, u := range uses {
		ctx, name, _ := strings.Cut(u.Expr, ".")
		switch {
		case ctx == "inputs" && s.Inputs != nil && hasKey(s.Inputs, name):
		case ctx == "outputs" && s.Outputs != nil && hasKey(s.Outputs, name):
		default:
			d.errorf(n, path, "unknown reference ${{%s}}; expected inputs.<name> or outputs.<name> declared by the job", u.Expr)
		}
	}
	if _, err := binding.Bind(s.Parallel.ProgramArguments, BindValues(s)); err != nil && !errors.Is(err, binding.ErrNoValue) {
		d.errorf(n, path, "%v", err)
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// safeRelative reports whether p is a relative path that stays inside its folder.
func safeRelative(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}
