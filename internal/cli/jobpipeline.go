package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/pipeline"
)

// pipelinePairs are job show's lines about a pipeline (why it ended, naming the failing step)
// or a step (its pipeline).
func pipelinePairs(d *api.RunDetail) [][2]string {
	if o := d.PipelineOf; o != nil {
		return [][2]string{{"Pipeline", fmt.Sprintf("%s (step %s)", o.Pipeline, o.Step)}}
	}
	p := d.Pipeline
	if p == nil {
		return nil
	}
	done := 0
	for _, s := range p.Steps {
		if s.State == string(pipeline.Completed) {
			done++
		}
	}
	pairs := [][2]string{{"Steps completed", fmt.Sprintf("%d of %d", done, len(p.Steps))}}
	if p.Reason != "" {
		pairs = append(pairs, [2]string{"Pipeline done", p.Reason})
	}
	return pairs
}

// stepStateText is a step's state as the graph shows it: the state, then how long its run
// took or that its outputs were reused.
func stepStateText(s api.PipelineStep) string {
	state := s.State
	if state == "" {
		state = "waiting"
	}
	switch {
	case s.ReusedFrom != "":
		state += " (reused)"
	case s.Started != nil:
		end := time.Now()
		if s.Ended != nil {
			end = *s.Ended
		}
		state += " " + fmtDuration(end.Sub(*s.Started))
	}
	return state
}

// showSteps prints a pipeline's graph (pipeline.Draw) with each step's state, then a table of
// its steps: run, compute, duration, and the reused run or why it did not complete.
func showSteps(w io.Writer, d *api.RunDetail) error {
	p := d.Pipeline
	if p == nil || d.Spec.Pipeline == nil {
		return nil
	}
	states := map[string]string{}
	for _, s := range p.Steps {
		states[s.Name] = stepStateText(s)
	}
	fmt.Fprintln(w, "Steps:")
	for _, l := range pipeline.Draw(*d.Spec.Pipeline, states) {
		fmt.Fprintln(w, "  "+l)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  STEP\tRUN\tSTATUS\tCOMPUTE\tDURATION\tNOTE")
	for _, s := range p.Steps {
		run, status, dur := s.RunID, string(s.Status), ""
		if run == "" {
			run, status = "-", s.State
		}
		if s.Started != nil && s.Ended != nil {
			dur = fmtDuration(s.Ended.Sub(*s.Started))
		}
		note := oneLine(s.Reason)
		if s.ReusedFrom != "" {
			note = "reused from " + s.ReusedFrom
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", s.Name, run, status, s.Compute, dur, note)
	}
	return tw.Flush()
}
