package pipeline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hangar-ml/hangar/internal/job"
)

// states parses "prep=completed train=running" (absent steps are NotStarted).
func states(s string) map[string]StepState {
	out := map[string]StepState{}
	for _, f := range strings.Fields(s) {
		name, st, _ := strings.Cut(f, "=")
		out[name] = StepState(st)
	}
	return out
}

// branches is two independent chains: a1 → a2 and b1 → b2.
func branches(continueOnFailure bool) job.PipelineRun {
	return job.PipelineRun{
		Settings: job.PipelineSettings{ContinueOnStepFailure: continueOnFailure},
		Steps: map[string]job.PipelineStep{
			"a1": step(outs("o")), "a2": step(outs("o"), "x=a1.o"),
			"b1": step(outs("o")), "b2": step(outs("o"), "x=b1.o"),
		},
	}
}

func withContinue(p job.PipelineRun) job.PipelineRun {
	p.Settings.ContinueOnStepFailure = true
	return p
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name  string
		p     job.PipelineRun
		steps string // states(); "!cancel" marks the pipeline Canceling
		want  Decision
	}{
		{"a new chain starts its first step", chain(), "",
			Decision{Start: []string{"prep"}}},
		{"a new diamond starts its source", diamond(), "",
			Decision{Start: []string{"a"}}},
		{"a running step holds its readers back", chain(), "prep=running", Decision{}},
		{"a queued step holds its readers back", chain(), "prep=queued", Decision{}},
		{"a completed producer lets its reader start", chain(), "prep=completed",
			Decision{Start: []string{"train"}}},
		{"a reader waits for every producer", chain(), "prep=completed train=running", Decision{}},
		{"both diamond branches start together", diamond(), "a=completed",
			Decision{Start: []string{"b", "c"}}},
		{"the join waits for the slower branch", diamond(), "a=completed b=completed c=running", Decision{}},
		{"independent sources start together", branches(false), "",
			Decision{Start: []string{"a1", "b1"}}},
		{"every step completed", chain(), "prep=completed train=completed score=completed",
			Decision{Done: true, Status: StatusCompleted}},

		// continue_on_step_failure false: stop everything (Azure's default per the SDK).
		{"a failure cancels the running steps and skips the rest", branches(false), "a1=failed b1=running",
			Decision{
				Skip: []Skip{
					{"a2", "a1 failed"},
					{"b2", "step a1 failed and continue_on_step_failure is false"},
				},
				Cancel: []string{"b1"},
			}},
		{"a failure skips independent steps not yet started", branches(false), "a1=failed b1=completed",
			Decision{
				Skip: []Skip{
					{"a2", "a1 failed"},
					{"b2", "step a1 failed and continue_on_step_failure is false"},
				},
				Done: true, Status: StatusFailed, Reason: "step a1 failed; a2, b2 skipped",
			}},
		{"a step that cannot start because the pipeline stops says so, not its producer's skip",
			job.PipelineRun{Steps: map[string]job.PipelineStep{
				"bad": step(outs("o")), "wait": step(outs("o")),
				"b1": step(outs("o"), "x=wait.o"), "b2": step(outs("o"), "x=b1.o"),
			}}, "bad=failed wait=running",
			Decision{
				Skip: []Skip{
					{"b1", "step bad failed and continue_on_step_failure is false"},
					{"b2", "step bad failed and continue_on_step_failure is false"},
				},
				Cancel: []string{"wait"},
			}},
		{"the pipeline ends once the canceled steps stop", branches(false), "a1=failed a2=skipped b1=canceled b2=skipped",
			Decision{Done: true, Status: StatusFailed, Reason: "step a1 failed; b1 canceled; a2, b2 skipped"}},
		{"a queued step is canceled too", branches(false), "a1=failed a2=skipped b1=queued",
			Decision{
				Skip:   []Skip{{"b2", "step a1 failed and continue_on_step_failure is false"}},
				Cancel: []string{"b1"},
			}},
		{"skips cascade down the chain at once", chain(), "prep=failed",
			Decision{
				Skip: []Skip{{"train", "prep failed"}, {"score", "prep failed, train skipped"}},
				Done: true, Status: StatusFailed, Reason: "step prep failed; train, score skipped",
			}},

		// continue_on_step_failure true: the other branch goes on.
		{"with continue, the independent branch keeps running", branches(true), "a1=failed b1=running",
			Decision{Skip: []Skip{{"a2", "a1 failed"}}}},
		{"with continue, the independent branch starts its next step", branches(true), "a1=failed a2=skipped b1=completed",
			Decision{Start: []string{"b2"}}},
		{"with continue, the pipeline fails once the branch ends", branches(true), "a1=failed a2=skipped b1=completed b2=completed",
			Decision{Done: true, Status: StatusFailed, Reason: "step a1 failed; a2 skipped"}},
		{"with continue, the diamond's join is skipped naming the failed branch", withContinue(diamond()), "a=completed b=failed c=running",
			Decision{Skip: []Skip{{"d", "b failed"}}}},
		{"with continue, every failure is named", branches(true), "a1=failed a2=skipped b1=completed b2=failed",
			Decision{Done: true, Status: StatusFailed, Reason: "steps a1, b2 failed; a2 skipped"}},

		// A step canceled on its own (not by the pipeline) does not complete either.
		{"a canceled step skips its readers and stops the pipeline", branches(false), "a1=canceled b1=completed",
			Decision{
				Skip: []Skip{
					{"a2", "a1 canceled"},
					{"b2", "step a1 canceled and continue_on_step_failure is false"},
				},
				Done: true, Status: StatusCanceled, Reason: "step a1 canceled; a2, b2 skipped",
			}},

		// The pipeline canceled.
		{"canceling cancels running steps and skips the rest", chain(), "prep=completed train=running !cancel",
			Decision{
				Skip:   []Skip{{"score", "pipeline canceled"}},
				Cancel: []string{"train"},
			}},
		{"canceling before any step ran ends at once", chain(), "!cancel",
			Decision{
				Skip: []Skip{
					{"prep", "pipeline canceled"}, {"train", "pipeline canceled"}, {"score", "pipeline canceled"},
				},
				Done: true, Status: StatusCanceled, Reason: "pipeline canceled; steps prep, train, score skipped",
			}},
		{"canceled ends once nothing runs", chain(), "prep=completed train=canceled score=skipped !cancel",
			Decision{Done: true, Status: StatusCanceled, Reason: "pipeline canceled; step train canceled; score skipped"}},
		{"a cancel after the last step completed changes nothing", chain(), "prep=completed train=completed score=completed !cancel",
			Decision{Done: true, Status: StatusCompleted}},

		{"a failure is named before a step the pipeline canceled", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"a": step(outs("o")), "z": step(outs("o")), "zz": step(outs("o"), "x=z.o"), "w": step(outs("o"), "x=a.o"),
			"src": step(outs("o")), "lone": step(outs("o"), "x=src.o"),
		}}, "a=canceled z=failed src=running",
			Decision{
				Skip: []Skip{
					{"lone", "step z failed and continue_on_step_failure is false"},
					{"w", "a canceled"},
					{"zz", "z failed"},
				},
				Cancel: []string{"src"},
			}},
		{"a step the pipeline stopped for is named in the skips of independent steps", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"a": step(outs("o")), "z": step(outs("o")), "solo": step(outs("o"), "x=a.o"), "late": step(outs("o"), "x=z.o"),
			"free": step(outs("o"), "x=other.o"), "other": step(outs("o")),
		}}, "a=completed z=failed other=running",
			Decision{
				Skip: []Skip{
					{"free", "step z failed and continue_on_step_failure is false"},
					{"late", "z failed"},
					{"solo", "step z failed and continue_on_step_failure is false"},
				},
				Cancel: []string{"other"},
			}},
		{"a state the planner does not know counts as running", chain(), "prep=completed train=preparing",
			Decision{}},
		{"a step in an unknown state is canceled after a failure", branches(false), "a1=failed a2=skipped b1=starting b2=skipped",
			Decision{Cancel: []string{"b1"}}},

		// A graph Check refuses cannot run.
		{"a cycle fails the pipeline", job.PipelineRun{Steps: map[string]job.PipelineStep{
			"p": step(outs("o"), "x=q.o"), "q": step(outs("o"), "x=p.o"),
		}}, "", Decision{Done: true, Status: StatusFailed, Reason: "jobs: a cycle: p → q → p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := State{Steps: states(strings.ReplaceAll(tt.steps, "!cancel", "")), Canceling: strings.Contains(tt.steps, "!cancel")}
			got := Decide(tt.p, st)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("Decide(%s) (-want +got):\n%s", tt.steps, diff)
			}
		})
	}
}
