package cli

import (
	"fmt"
	"sort"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// commandPairs are job show's command lines: what ran, bound to the inputs' values and the
// node's paths (reported by the supervisor when the run started), and the spec's command when
// it differs; before the run starts, the spec's command.
func commandPairs(d *api.RunDetail) [][2]string {
	switch {
	case d.BoundCommand == "":
		if d.StartedAt == nil && !d.Status.Terminal() {
			return [][2]string{{"Command", d.Spec.Command + "  (bound when the run starts)"}}
		}
		return [][2]string{{"Command", d.Spec.Command}}
	case d.BoundCommand == d.Spec.Command:
		return [][2]string{{"Command", d.BoundCommand}}
	}
	return [][2]string{{"Command", d.BoundCommand}, {"Spec command", d.Spec.Command}}
}

func archivedText(a bool) string {
	if a {
		return "yes (hidden from job list; hangar job restore shows it again)"
	}
	return ""
}

// fmtInputs renders a spec's inputs: literals with their value, data with type, path and mode.
func fmtInputs(in map[string]job.Input) []string {
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, n+" = "+inputText(in[n]))
	}
	return out
}

func inputText(in job.Input) string {
	if in.IsLiteral() {
		if in.Value == "" && in.Optional {
			return "(not set, optional)"
		}
		return fmt.Sprintf("%s (%s)", in.Value, in.Type)
	}
	s := in.Type + " " + in.Path
	if in.Mode != "" {
		s += " (" + in.Mode + ")"
	}
	return s
}

// fmtStrings renders a map sorted by key as "key<sep>value".
func fmtStrings(m map[string]string, sep string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+sep+m[k])
	}
	return out
}
