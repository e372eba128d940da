package spec

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/sweep"
)

// trial decodes a sweep's trial: an inline command job, or `./component.yml` naming a
// command component file whose inputs the sweep's inputs and search space give values to.
func (d *sweepDecoder) trial(n *yaml.Node, got map[string]*yaml.Node, s *job.Spec) {
	const path = "trial"
	if n.Kind == yaml.ScalarNode {
		d.componentTrial(n, path, got, s)
		return
	}
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "an inline command job or a component file (trial: ./train.yml)")
		return
	}
	common := d.jobs.jobFields(s)
	fs := fields{"type": func(v *yaml.Node, p string) { d.enum(v, p, "command") }}
	for _, k := range []string{"command", "code", "environment", "environment_variables", "distribution",
		"resources", "queue_settings", "services"} {
		fs[k] = common[k]
	}
	tg := d.mapping(n, path, fs)
	switch cmd := tg["command"]; {
	case cmd == nil:
		d.required(n, join(path, "command"))
	case !isString(cmd): // text reported it
	case strings.TrimSpace(s.Command) == "":
		d.errorf(cmd, join(path, "command"), "must not be empty")
	default:
		d.checkTrialCommand(cmd, join(path, "command"), s)
	}
	if dist := s.Distribution; dist != nil && dist.Type == "tensorflow" && lookup(tg["distribution"], "worker_count") == nil {
		dist.WorkerCount = max(s.Resources.InstanceCount, 1)
	}
}

// checkTrialCommand checks an inline trial's references (inputs, outputs and the search
// space) and that the command binds with the values a trial may have: every choice, and a
// stand-in of each numeric kind.
func (d *sweepDecoder) checkTrialCommand(n *yaml.Node, path string, s *job.Spec) {
	uses, err := binding.Uses(s.Command)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return
	}
	space := s.Sweep.Config.Space
	var known []string
	for _, name := range keys(s.Inputs) {
		known = append(known, "inputs."+name)
	}
	for _, name := range keys(s.Outputs) {
		known = append(known, "outputs."+name)
	}
	for _, name := range keys(space) {
		known = append(known, "search_space."+name)
	}
	for _, u := range uses {
		ctx, name, _ := strings.Cut(u.Expr, ".")
		switch {
		case slices.Contains(known, u.Expr):
			if ctx == "inputs" && s.Inputs[name].Optional && !u.Optional {
				d.errorf(n, path, "optional input ${{%s}} must be used inside $[[ ... ]]", u.Expr)
			}
		case ctx == "inputs" || ctx == "outputs" || ctx == "search_space":
			d.errorf(n, path, "unknown reference ${{%s}}; known: %s", u.Expr, listOrNone(known))
		default:
			d.errorf(n, path, "unknown expression ${{%s}}; expected inputs.<name>, outputs.<name> or search_space.<name>", u.Expr)
		}
	}
	for _, params := range sampleParams(space) {
		values := BindValues(s)
		for name, v := range params {
			values["search_space."+name] = ParamText(v)
		}
		if _, err := binding.Bind(s.Command, values); err != nil && !errors.Is(err, binding.ErrNoValue) {
			d.errorf(n, path, "%v", err)
			return
		}
	}
}

// sampleParams are parameter sets that stand for the values a trial may get: each choice's
// values in turn, and for the numeric kinds a value of their form (integer or not, negative
// where the kind can be).
func sampleParams(space sweep.Space) []sweep.Params {
	out := []sweep.Params{{}, {}}
	for name, e := range space {
		var vs []any
		switch e.Kind {
		case "choice":
			vs = e.Values
		case "randint":
			vs = []any{int64(0)}
		case "normal", "qnormal":
			vs = []any{0.5, -1.5}
		default:
			vs = []any{0.5}
		}
		if e.Q > 0 && e.Q == math.Trunc(e.Q) {
			vs = []any{float64(1), float64(-2)}
		}
		if len(vs) == 0 {
			continue // refused by the decoder; no stand-in to give
		}
		for len(out) < len(vs) {
			out = append(out, maps.Clone(out[0]))
		}
		for i := range out {
			out[i][name] = vs[i%len(vs)]
		}
	}
	return out
}

// sweepValues adds to a sweep's BindValues a value of each search-space parameter, for the
// command's ${{search_space.x}} and for a component trial's inputs the space binds.
func sweepValues(sw *job.SweepRun, values map[string]string) {
	for name, v := range SampleParams(sw.Config.Space) {
		values["search_space."+name] = ParamText(v)
		if slices.Contains(sw.ParamInputs, name) {
			values["inputs."+name] = ParamText(v)
		}
	}
}

// SampleParams is one parameter set of the space, for checks before any trial runs.
func SampleParams(space sweep.Space) sweep.Params { return sampleParams(space)[0] }

// ParamText is a parameter's value as a command receives it.
func ParamText(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func paramType(v any) string {
	switch v.(type) {
	case int64, int:
		return job.InputInteger
	case float64:
		return job.InputNumber
	case bool:
		return job.InputBoolean
	}
	return job.InputString
}

// TrialSpec is the command job a sweep's trial runs: the parent's trial template with the
// trial's values as literal inputs, and ${{search_space.x}} in its command read as
// ${{inputs.x}}, so that a value is bound like any input's (as data, quoted for the place it
// lands in; see package binding), never pasted into the command's text.
func TrialSpec(parent job.Spec, params sweep.Params) (job.Spec, error) {
	if parent.Sweep == nil {
		return job.Spec{}, errors.New("not a sweep")
	}
	sp := parent
	sp.Type, sp.Sweep, sp.Name, sp.DisplayName = "command", nil, "", ""
	sp.Inputs = maps.Clone(parent.Inputs)
	if sp.Inputs == nil {
		sp.Inputs = map[string]job.Input{}
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if _, ok := parent.Sweep.Config.Space[name]; !ok {
			return job.Spec{}, fmt.Errorf("parameter %s is not in the search space", name)
		}
		v := params[name]
		sp.Inputs[name] = job.Input{Type: paramType(v), Value: ParamText(v)}
	}
	cmd, err := readSearchSpaceAsInputs(parent.Command)
	if err != nil {
		return job.Spec{}, err
	}
	sp.Command = cmd
	return sp, nil
}

// readSearchSpaceAsInputs rewrites ${{search_space.x}} references as ${{inputs.x}}, leaving
// every other byte of the command as written.
func readSearchSpaceAsInputs(command string) (string, error) {
	return binding.Rename(command, func(expr string) string {
		if name, ok := strings.CutPrefix(expr, "search_space."); ok {
			return "inputs." + name
		}
		return expr
	})
}

// componentTrial decodes `trial: ./component.yml`: a command component file read relative to
// the sweep's file. Its inputs take their values from the sweep's inputs and search space (by
// name), else from their defaults. `trial: azureml:<name>@latest` (a registered component) is
// kept as written and bound by the server, which has the component.
func (d *sweepDecoder) componentTrial(n *yaml.Node, path string, got map[string]*yaml.Node, s *job.Spec) {
	ref := strings.TrimSpace(d.str(n, path))
	if strings.HasPrefix(strings.ToLower(ref), "azureml:") {
		// A registered component: the server binds it at create (controller.resolveSweepTrial).
		if strings.TrimSpace(ref[len("azureml:"):]) == "" {
			d.errorf(n, path, "expected azureml:<component>:<version> or azureml:<component>@latest")
			return
		}
		s.Sweep.Trial = ref
		return
	}
	c, cmd, file, ok := d.pipelines.componentFile(n, path, "a component file (trial: ./train.yml)")
	if !ok {
		return
	}
	errs := len(d.errs)
	comp := d.trialComponent(c, cmd, n)
	if len(d.errs) > errs {
		return
	}
	s.Sweep.Trial = ref
	d.bindComponent(n, got, s, comp, file)
}
