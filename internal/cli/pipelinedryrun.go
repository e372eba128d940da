package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// dryRunStep is one step of a pipeline as `job create --dry-run` shows it.
type dryRunStep struct {
	Name      string            `json:"name"`
	Type      string            `json:"type"`
	Compute   string            `json:"compute"`
	Component string            `json:"component,omitempty"`
	Reads     map[string]string `json:"reads,omitempty"` // input → <step>.<output>
	Command   string            `json:"command,omitempty"`
}

// dryRunPipeline prints a decoded pipeline's steps, what each reads from which step, and where
// it would run, without creating anything. Registered components are resolved only by the
// workspace at create, so they are shown as named.
func (e *Env) dryRunPipeline(p *job.PipelineRun) error {
	var steps []dryRunStep
	for _, name := range slices.Sorted(maps.Keys(p.Steps)) {
		st := p.Steps[name]
		ds := dryRunStep{Name: name, Type: orDefault(st.Spec.Type, "command"), Compute: orDefault(st.Spec.Compute, "the workspace default"),
			Component: st.Component, Command: st.Spec.Command}
		for in, ref := range st.From {
			if ds.Reads == nil {
				ds.Reads = map[string]string{}
			}
			ds.Reads[in] = ref.Step + "." + ref.Output
		}
		steps = append(steps, ds)
	}
	return e.printData(steps, func(w io.Writer) error {
		if len(steps) == 0 && p.Component != "" { // component: azureml:<name>@latest at its top
			_, err := fmt.Fprintf(w, "Dry run (nothing created): a pipeline defined by the component %s, whose steps the workspace resolves at create\n", p.Component)
			return err
		}
		fmt.Fprintf(w, "Dry run (nothing created): a pipeline of %d step(s)\n", len(steps))
		for _, s := range steps {
			fmt.Fprintf(w, "\n%s (%s on %s)\n", s.Name, s.Type, s.Compute)
			if s.Component != "" {
				fmt.Fprintf(w, "  component: %s\n", s.Component)
			}
			var reads []string
			for _, in := range slices.Sorted(maps.Keys(s.Reads)) {
				reads = append(reads, in+" ← "+s.Reads[in])
			}
			if len(reads) > 0 {
				fmt.Fprintf(w, "  reads: %s\n", strings.Join(reads, ", "))
			}
			if s.Command != "" {
				fmt.Fprintf(w, "  command: %s\n", s.Command)
			}
		}
		return nil
	})
}
