package pipeline

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/hangar-ml/hangar/internal/job"
)

// randomDAG draws a pipeline of 1-12 steps whose edges only go from a lower to a higher index,
// so it has no cycle.
func randomDAG(rt *rapid.T) job.PipelineRun {
	n := rapid.IntRange(1, 12).Draw(rt, "steps")
	p := job.PipelineRun{
		Settings: job.PipelineSettings{ContinueOnStepFailure: rapid.Bool().Draw(rt, "continue")},
		Steps:    map[string]job.PipelineStep{},
	}
	for i := range n {
		var from []string
		for j := range i {
			if rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("edge%d_%d", j, i)) == 0 {
				from = append(from, fmt.Sprintf("in%d=s%02d.o", j, j))
			}
		}
		p.Steps[fmt.Sprintf("s%02d", i)] = step(outs("o"), from...)
	}
	return p
}

// TestDecideProperties runs random pipelines to their end, steps completing, failing or the
// pipeline being canceled at random, and checks every decision: the same state decides the
// same; only steps not started start or are skipped, and only with every producer completed;
// only queued or running steps are canceled; after a step fails without
// continue_on_step_failure nothing starts; the pipeline ends, Completed exactly when every step
// completed, otherwise with a reason naming each failed step.
func TestDecideProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := randomDAG(rt)
		deps := Deps(p)
		st := State{Steps: map[string]StepState{}}
		for round := 0; ; round++ {
			if round > 200 {
				rt.Fatalf("no end after %d rounds: %v", round, st)
			}
			d := Decide(p, st)
			if again := Decide(p, st); fmt.Sprint(again) != fmt.Sprint(d) {
				rt.Fatalf("round %d: %v then %v", round, d, again)
			}
			checkDecision(rt, p, deps, st, d)
			if d.Done {
				checkEnd(rt, p, st, d)
				return
			}
			for _, s := range d.Skip {
				st.Steps[s.Step] = Skipped
			}
			for _, name := range d.Start {
				st.Steps[name] = Queued
			}
			for _, name := range d.Cancel {
				st.Steps[name] = Canceled
			}
			advance(rt, &st, round)
		}
	})
}

func checkDecision(rt *rapid.T, p job.PipelineRun, deps map[string][]string, st State, d Decision) {
	stopped := !p.Settings.ContinueOnStepFailure && slices.ContainsFunc(Order(p), func(n string) bool {
		return st.Steps[n] == Failed || st.Steps[n] == Canceled
	})
	if (stopped || st.Canceling) && len(d.Start) > 0 {
		rt.Fatalf("started %v after a failure or cancel: %v", d.Start, st)
	}
	for _, name := range d.Start {
		if st.Steps[name] != NotStarted {
			rt.Fatalf("started %s in state %q", name, st.Steps[name])
		}
		for _, producer := range deps[name] {
			if st.Steps[producer] != Completed {
				rt.Fatalf("started %s before %s completed (%q)", name, producer, st.Steps[producer])
			}
		}
	}
	for _, s := range d.Skip {
		if st.Steps[s.Step] != NotStarted || s.Reason == "" {
			rt.Fatalf("skip %+v of a step in state %q", s, st.Steps[s.Step])
		}
	}
	for _, name := range d.Cancel {
		if s := st.Steps[name]; s != Queued && s != Running {
			rt.Fatalf("cancel %s in state %q", name, s)
		}
	}
	if d.Done && (len(d.Start) > 0 || len(d.Cancel) > 0) {
		rt.Fatalf("done with work left: %+v", d)
	}
}

// checkEnd checks the final status against the steps' states (the decision's skips applied).
func checkEnd(rt *rapid.T, p job.PipelineRun, st State, d Decision) {
	for _, s := range d.Skip {
		st.Steps[s.Step] = Skipped
	}
	all := true
	for _, name := range Order(p) {
		switch st.Steps[name] {
		case Completed:
		case Failed:
			all = false
			if d.Status != StatusFailed && d.Status != StatusCanceled || !containsWord(d.Reason, name) {
				rt.Fatalf("%s failed but the pipeline ended %s %q", name, d.Status, d.Reason)
			}
		case Canceled, Skipped:
			all = false
		default:
			rt.Fatalf("ended with %s %q", name, st.Steps[name])
		}
	}
	if all != (d.Status == StatusCompleted) || (!all && d.Reason == "") {
		rt.Fatalf("ended %s %q with steps %v", d.Status, d.Reason, st.Steps)
	}
}

func containsWord(s, w string) bool {
	return slices.ContainsFunc(splitWords(s), func(x string) bool { return x == w })
}

func splitWords(s string) []string {
	var out []string
	word := ""
	for _, r := range s + " " {
		if r == ' ' || r == ',' || r == ';' {
			if word != "" {
				out = append(out, word)
			}
			word = ""
			continue
		}
		word += string(r)
	}
	return out
}

// advance moves one queued or running step on, or cancels the pipeline.
func advance(rt *rapid.T, st *State, round int) {
	if !st.Canceling && rapid.IntRange(0, 20).Draw(rt, fmt.Sprintf("cancel%d", round)) == 0 {
		st.Canceling = true
		return
	}
	var busy []string
	for name, s := range st.Steps {
		if s == Queued || s == Running {
			busy = append(busy, name)
		}
	}
	if len(busy) == 0 {
		return
	}
	slices.Sort(busy)
	name := rapid.SampledFrom(busy).Draw(rt, fmt.Sprintf("step%d", round))
	if st.Steps[name] == Queued {
		st.Steps[name] = Running
		return
	}
	st.Steps[name] = rapid.SampledFrom([]StepState{Completed, Completed, Completed, Failed}).Draw(rt, fmt.Sprintf("end%d", round))
}
