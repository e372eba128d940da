package spec

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/pattern"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/job"
)

// ParseJobFile reads a job YAML file, applies --set overrides, decodes strictly and
// validates. file is the path as the user typed it (used in messages); relative paths in
// the spec resolve against filepath.Dir(file) and are returned absolute. The error, when
// not nil, is an ErrorList; warnings are formatted like errors.
func ParseJobFile(file string, sets []string, opts ...FileOption) (*job.Spec, []string, error) {
	return parseFile(ParseJob, file, sets, opts...)
}

// ParseJob is ParseJobFile for YAML already read; baseDir is the directory relative
// paths resolve against ("" means the current directory).
func ParseJob(file string, data []byte, baseDir string, sets []string, opts ...FileOption) (*job.Spec, []string, error) {
	d, root := begin(file, data, baseDir, sets, append(append(append(jobKeys[:len(jobKeys):len(jobKeys)], parallelKeys...), sweepKeys...), pipelineKeys...), opts...)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	spec := d.jobs.job(root)
	return result(d, spec)
}

// begin parses the document, applies the overrides and returns the root mapping (nil
// after a fatal problem, which d.errs holds).
func begin(file string, data []byte, baseDir string, sets, known []string, opts ...FileOption) (*decoder, *yaml.Node) {
	if abs, err := filepath.Abs(baseDir); err == nil {
		baseDir = abs
	}
	d := newDecoder(file, baseDir)
	for _, o := range opts {
		o(d)
	}
	root, err := parseYAML(data)
	if err != nil {
		d.errs = append(d.errs, yamlError(file, err))
		return d, nil
	}
	if root == nil {
		root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1}
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "expected a mapping at the top level, got %s", describe(root))
		return d, nil
	}
	d.applySets(root, sets, known)
	return d, root
}

// parseYAML reads exactly one YAML document; it returns nil for an empty one.
func parseYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := safeDecode(dec, &doc); err == io.EOF {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var extra yaml.Node
	if err := safeDecode(dec, &extra); err != io.EOF {
		line := extra.Line
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("yaml: line %d: found more than one YAML document; expected one", line)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil
	}
	return resolve(doc.Content[0]), nil
}

// safeDecode and safeUnmarshal turn a panic inside the YAML library into an error, so
// that no input can crash the caller.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return dec.Decode(n)
}

func safeUnmarshal(data []byte, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return yaml.Unmarshal(data, n)
}

var yamlLine = pattern.New(`^line (\d+): (?s:(.*))$`)

// yamlError converts a YAML syntax error into an Error with its line.
func yamlError(file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: file, Msg: "malformed YAML: " + msg}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "malformed YAML: " + m[2]
	}
	return e
}

var (
	jobTypes       = []string{"command", "sweep", "pipeline", "parallel", "automl", "spark"}
	jobName        = pattern.New(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$`)
	readOnlyFields = []string{"status", "creation_context", "log_files", "id"}
)

// job decodes a command job from the root mapping.
func (d *jobDecoder) job(root *yaml.Node) *job.Spec {
	s := &job.Spec{Type: "command"}
	if t := lookup(root, "type"); t != nil && !isNull(t) {
		switch typ := d.enum(t, "type", jobTypes...); typ {
		case "command":
		case "parallel":
			return d.parallel.parallelJob(root)
		case "sweep":
			return d.sweeps.sweepJob(root)
		case "pipeline":
			return d.pipelines.pipelineJob(root)
		case "":
			return s
		default:
			d.errorf(t, "type", "job type %s is not supported yet", typ)
			return s
		}
	}
	got := d.mapping(root, "", d.jobFields(s))
	d.checkJob(root, got, s)
	return s
}

// jobFields is the command job's field table (SPEC.md §2).
func (d *jobDecoder) jobFields(s *job.Spec) fields {
	str := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) { *dst = d.str(n, p) }
	}
	fs := fields{
		"$schema":               nil,
		"type":                  nil,
		"name":                  func(n *yaml.Node, p string) { s.Name = d.jobName(n, p) },
		"display_name":          str(&s.DisplayName),
		"experiment_name":       str(&s.ExperimentName),
		"command":               func(n *yaml.Node, p string) { s.Command = d.text(n, p, "a shell command (a string)") },
		"code":                  func(n *yaml.Node, p string) { s.Code = d.jobCode(n, p) },
		"environment":           func(n *yaml.Node, p string) { s.Environment = d.assets.jobEnvironment(n, p) },
		"environment_variables": func(n *yaml.Node, p string) { s.EnvironmentVariables = d.envVars(n, p) },
		"compute":               func(n *yaml.Node, p string) { s.Compute = d.compute(n, p) },
		"inputs":                func(n *yaml.Node, p string) { s.Inputs = d.inputs(n, p) },
		"outputs":               func(n *yaml.Node, p string) { s.Outputs = d.outputs(n, p) },
		"resources":             func(n *yaml.Node, p string) { s.Resources = d.resources(n, p) },
		"limits":                func(n *yaml.Node, p string) { s.Limits = d.limits(n, p) },
		"distribution":          func(n *yaml.Node, p string) { s.Distribution = d.distribution(n, p) },
		"queue_settings":        func(n *yaml.Node, p string) { s.QueueSettings = d.queueSettings(n, p) },
		"services":              func(n *yaml.Node, p string) { s.Services = d.services(n, p) },
		"identity":              func(n *yaml.Node, p string) { s.Identity = d.identity(n, p) },
		"parent_job_name": func(n *yaml.Node, p string) {
			d.str(n, p)
			d.warnf(n, p, "ignored (Hangar does not nest jobs under a parent)")
		},
	}
	d.meta(fs, &s.Meta)
	for _, f := range readOnlyFields {
		fs[f] = func(n *yaml.Node, p string) { d.warnf(n, p, "read-only field ignored") }
	}
	fs["additional_includes"] = func(n *yaml.Node, p string) {
		d.errorf(n, p, "a component's field (Azure's command jobs take none): put the command in a component file, or the files in the code folder")
	}
	return fs
}

// checkJob applies the rules that span fields, and the defaults.
// checkShared checks and defaults what a command job and a parallel job share: no output
// named as an input, the experiment (the folder's name), one instance.
func (d *jobDecoder) checkShared(got map[string]*yaml.Node, s *job.Spec) {
	for name := range s.Outputs {
		if _, dup := s.Inputs[name]; dup {
			d.errorf(keyNode(got["outputs"], name), "outputs."+name, "name %s is also used by an input", quote(name))
		}
	}
	if s.ExperimentName == "" {
		s.ExperimentName = defaultExperiment(d.baseDir)
	}
	if s.Resources.InstanceCount == 0 {
		s.Resources.InstanceCount = 1
	}
}

func (d *jobDecoder) checkJob(root *yaml.Node, got map[string]*yaml.Node, s *job.Spec) {
	switch cmd := got["command"]; {
	case cmd == nil:
		d.required(nil, "command")
	case !isString(cmd): // text reported it
	case strings.TrimSpace(s.Command) == "":
		d.errorf(cmd, "command", "must not be empty")
	default:
		d.checkCommand(cmd, s)
	}
	d.checkShared(got, s)
	if dist := s.Distribution; dist != nil && dist.Type == "tensorflow" && lookup(got["distribution"], "worker_count") == nil {
		dist.WorkerCount = s.Resources.InstanceCount
	}
}

// keyNode returns the key node of key in mapping n (for its line), or n.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	if n = resolve(n); n != nil {
		if i := keyIndex(n, key); i >= 0 {
			return n.Content[i]
		}
	}
	return n
}

// checkCommand checks every ${{ }} reference in the command against the declared inputs
// and outputs, and that the command binds with the values the run will have, so that a
// value bash would evaluate (see package binding) is refused here, before anything is sent.
func (d *jobDecoder) checkCommand(n *yaml.Node, s *job.Spec) {
	uses, err := binding.Uses(s.Command)
	if err != nil {
		d.errorf(n, "command", "%v", err)
		return
	}
	declared := map[string]bool{}
	var known []string
	for _, name := range keys(s.Inputs) {
		declared["inputs."+name] = true
		known = append(known, "inputs."+name)
	}
	for _, name := range keys(s.Outputs) {
		declared["outputs."+name] = true
		known = append(known, "outputs."+name)
	}
	for _, u := range uses {
		ctx, name, _ := strings.Cut(u.Expr, ".")
		switch ok := declared[u.Expr]; {
		case ctx == "search_space" || ctx == "parent":
			d.errorf(n, "command", "${{%s}} is only allowed in sweep/pipeline jobs", u.Expr)
		case (ctx == "inputs" || ctx == "outputs") && !ok:
			d.errorf(n, "command", "unknown reference ${{%s}}; known: %s", u.Expr, listOrNone(known))
		case !ok:
			d.errorf(n, "command", "unknown expression ${{%s}}; expected inputs.<name> or outputs.<name>", u.Expr)
		case ctx == "inputs" && s.Inputs[name].Optional && !u.Optional:
			d.errorf(n, "command", "optional input ${{%s}} must be used inside $[[ ... ]]", u.Expr)
		}
	}
	if _, err := binding.Bind(s.Command, BindValues(s)); err != nil && !errors.Is(err, binding.ErrNoValue) {
		d.errorf(n, "command", "%v", err)
	}
}

// BindValues are the values a run of s binds, as far as they are known before it runs:
// literal inputs' values, and the path of data inputs used directly. Other data inputs
// and outputs become a path in the run's directory, known only to the supervisor; a
// stand-in takes its place, which binds wherever such a path would.
func BindValues(s *job.Spec) map[string]string {
	values := map[string]string{}
	for name, in := range s.Inputs {
		switch {
		case in.IsLiteral() && in.Optional && in.Value == "":
		case in.IsLiteral():
			values["inputs."+name] = in.Value
		case in.Optional && in.Path == "" && in.Manifest == "":
		case in.Mode == "direct" && in.Manifest == "":
			values["inputs."+name] = in.Path
		default:
			values["inputs."+name] = "<path of inputs." + name + ">"
		}
	}
	for name := range s.Outputs {
		values["outputs."+name] = "<path of outputs." + name + ">"
	}
	if s.Sweep != nil {
		sweepValues(s.Sweep, values)
	}
	return values
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none declared"
	}
	return strings.Join(names, ", ")
}

// jobName checks a job name.
func (d *jobDecoder) jobName(n *yaml.Node, path string) string {
	s := d.str(n, path)
	if s != "" && !jobName.MatchString(s) {
		d.expected(n, path, "a name of letters, digits, _ and - starting with a letter or digit (at most 255)")
	}
	return s
}

// defaultExperiment is Azure's default experiment name: the name of the directory that
// holds the spec, with characters outside [A-Za-z0-9_.-] replaced by "_".
func defaultExperiment(dir string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.-", r) {
			return r
		}
		return '_'
	}, filepath.Base(dir))
	name = strings.TrimLeft(name, "_.-")
	if name == "" {
		return "Default"
	}
	return name
}
