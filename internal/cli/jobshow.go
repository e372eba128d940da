package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

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

// serverlessPairs is job show's line on what the serverless pool created for the job.
func serverlessPairs(d *api.RunDetail) [][2]string {
	u := d.Serverless
	if u == nil {
		return nil
	}
	line := fmt.Sprintf("pool %s, size %s, %d instance(s) on cluster %s", u.Pool, u.Size, u.Instances, u.Cluster)
	if len(u.Nodes) > 0 {
		line += "; nodes: " + strings.Join(u.Nodes, ", ")
	}
	return [][2]string{{"Serverless", line}}
}

func archivedText(a bool) string {
	if a {
		return "yes (hidden from job list; hangar job restore shows it again)"
	}
	return ""
}

// fmtInputs renders a spec's inputs: literals with their value, data with type, path and mode.
func fmtInputs(in map[string]job.Input) []string {
	out := make([]string, 0, len(in))
	for _, n := range slices.Sorted(maps.Keys(in)) {
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
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+sep+m[k])
	}
	return out
}

// checkpointPairs are job show's lines on the run's latest checkpoint and what its
// preemptions cost ("preempted 1×: 42 s of work lost, resumed from the checkpoint of ...").
func checkpointPairs(d *api.RunDetail) [][2]string {
	var pairs [][2]string
	if cp := d.Checkpoint; cp != nil {
		pairs = append(pairs, [2]string{"Checkpoint", fmt.Sprintf("saved %s by attempt %d (%d files, %d bytes)",
			fmtClock(cp.SavedAt), cp.Attempt, cp.Files, cp.Bytes)})
	}
	if len(d.Preemptions) == 0 {
		return pairs
	}
	lost := 0.0
	for _, p := range d.Preemptions {
		lost += p.LostSeconds
	}
	last := d.Preemptions[len(d.Preemptions)-1]
	line := fmt.Sprintf("%d×: %s of work lost, ", len(d.Preemptions), fmtSeconds(lost))
	if last.ResumedFrom != nil {
		line += "resumed from the checkpoint of " + fmtClock(*last.ResumedFrom)
	} else {
		line += "restarted from scratch (no checkpoint saved)"
	}
	pairs = append(pairs, [2]string{"Preempted", line})
	for i, p := range d.Preemptions {
		wait := "not started again yet"
		if p.WaitSeconds != nil {
			wait = "waited " + fmtSeconds(*p.WaitSeconds) + " to start again"
		}
		pairs = append(pairs, [2]string{fmt.Sprintf("Preemption %d", i+1), fmt.Sprintf("attempt %d on node %s at %s: %s lost, %s",
			p.Attempt, p.Node, fmtClock(p.At), fmtSeconds(p.LostSeconds), wait)})
	}
	return pairs
}

func fmtClock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func fmtSeconds(s float64) string { return fmt.Sprintf("%.0f s", s) }
