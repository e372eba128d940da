package component

import "github.com/hangar-ml/hangar/internal/job"

// A step's output bound to an output of its pipeline (${{parent.outputs.y}}, as the whole value
// or as the path of an output object) takes what the pipeline's output says of itself: its type,
// mode, path, name and version, as Azure takes them. A uri_file output of the pipeline makes the
// step's output a file; its datastore path is where the step writes. The same goes for the
// settings a step gives the outputs of the component it uses (outputs: {model: {mode: upload}}).
// Settings here are sparse: a field left empty is one that was not given.

// MergeOutput is base with the fields over gives (those not empty) in their place.
func MergeOutput(base, over job.Output) job.Output {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&base.Type, over.Type}, {&base.Mode, over.Mode}, {&base.Path, over.Path}, {&base.Name, over.Name},
		{&base.Version, over.Version}, {&base.Description, over.Description},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	return base
}

// ApplyOutputs gives each output of settings to the step output refs binds it to (skipping an
// output bound to no step, or to a step steps does not hold).
func ApplyOutputs(steps map[string]Step, refs map[string]job.StepRef, settings map[string]job.Output) {
	for _, out := range sortedKeys(settings) {
		r, ok := refs[out]
		st, found := steps[r.Step]
		if !ok || !found {
			continue
		}
		outs := make(map[string]job.Output, len(st.Spec.Outputs)+1)
		for k, v := range st.Spec.Outputs {
			outs[k] = v
		}
		outs[r.Output] = MergeOutput(outs[r.Output], settings[out])
		st.Spec.Outputs = outs
		steps[r.Step] = st
	}
}

// JobOutputs are the outputs of a pipeline job defined by a component (`component:` at its top):
// each output the component declares, with the settings the job gives it (sparse).
func JobOutputs(declared, sets map[string]job.Output) map[string]job.Output {
	out := map[string]job.Output{}
	for name, o := range declared {
		out[name] = MergeOutput(o, sets[name])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
