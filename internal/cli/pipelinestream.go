package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// A pipeline job has no log of its own: `job stream` (and `job create --stream`) of one prints
// its steps' changes as they happen, as az prints a pipeline's execution log: each step's state
// with its run, and for a step that failed the last lines of its log. Then the summary, whose
// exit code is the pipeline's.

// pipelinePoll is how often a streamed pipeline's steps are read.
const pipelinePoll = time.Second

// stepSeen is what the stream last printed of a step.
type stepSeen struct{ state, run string }

// stepChanges returns the steps whose state or run differs from what seen holds (a step that has
// not started is left out until it has a state), and records them in seen.
func stepChanges(seen map[string]stepSeen, steps []api.PipelineStep) []api.PipelineStep {
	var out []api.PipelineStep
	for _, s := range steps {
		now := stepSeen{state: s.State, run: s.RunID}
		if now.state == "" || seen[s.Name] == now {
			continue
		}
		seen[s.Name] = now
		out = append(out, s)
	}
	return out
}

// stepLine is a step's change as the stream prints it:
// "[15:04:05] step train (run plucky_otter_train): failed: exit code 1". The time is the step's
// start or end when it has one, else at.
func stepLine(s api.PipelineStep, at time.Time) string {
	when := at
	switch {
	case s.Ended != nil && s.State != "running" && s.State != "queued":
		when = *s.Ended
	case s.Started != nil && s.State == "running":
		when = *s.Started
	}
	who := "step " + s.Name
	if s.RunID != "" {
		who += " (run " + s.RunID + ")"
	}
	what := s.State
	switch {
	case s.ReusedFrom != "":
		what += ": reused the outputs of run " + s.ReusedFrom
	case s.State == "completed" && s.Started != nil && s.Ended != nil:
		what += " in " + fmtDuration(s.Ended.Sub(*s.Started))
	case s.Reason != "" && s.State != "running" && s.State != "queued":
		what += ": " + oneLine(s.Reason)
	}
	return fmt.Sprintf("[%s] %s: %s", when.Local().Format("15:04:05"), who, what)
}

// streamPipeline prints a pipeline's step changes until it ends, the log tail of each step that
// failed, then the summary; the error carries the pipeline's exit code. When the server goes
// away it keeps trying for a while, as following a log does.
func (e *Env) streamPipeline(ctx context.Context, c *api.Client, name string, raw bool) error {
	out := newRunOutput(e.Stdout, raw)
	seen := map[string]stepSeen{}
	var lostSince time.Time
	for {
		d, err := c.Jobs.Get(ctx, name)
		if err != nil {
			if err := e.reconnect(ctx, &c, &lostSince, err, 0); err != nil {
				return err
			}
		} else {
			lostSince = time.Time{}
			e.printSteps(ctx, c, d, seen, out)
			if d.Status.Terminal() {
				return e.summary(d, newRunOutput(e.Stderr, raw))
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pipelinePoll):
		}
	}
}

// printSteps prints the steps that changed since the last read, and the log tail of each that
// failed.
func (e *Env) printSteps(ctx context.Context, c *api.Client, d *api.RunDetail, seen map[string]stepSeen, out runOutput) {
	if d.Pipeline == nil {
		return
	}
	for _, s := range stepChanges(seen, d.Pipeline.Steps) {
		out.line(stepLine(s, time.Now()))
		if s.State != "failed" || s.RunID == "" {
			continue
		}
		sd, err := c.Jobs.Get(ctx, s.RunID)
		if err != nil || len(sd.LogTail) == 0 || sd.Status != job.Failed {
			continue
		}
		fmt.Fprintf(out.w, "  last lines of %s's log (all of it: hangar job stream %s):\n", s.Name, s.RunID)
		for _, l := range sd.LogTail {
			out.line("  | " + l)
		}
	}
}
