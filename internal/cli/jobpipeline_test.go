package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// job show of a pipeline draws its graph with each step's state and duration, says which step
// was reused from which run and which step failed; job show of a step names its pipeline.
func TestShowPipelineAndStep(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 := t0.Add(90 * time.Second)
	graph := &job.PipelineRun{Steps: map[string]job.PipelineStep{
		"prep":  {Spec: job.Spec{Type: "command"}},
		"train": {Spec: job.Spec{Type: "command"}, From: map[string]job.StepRef{"data": {Step: "prep", Output: "d"}}},
		"score": {Spec: job.Spec{Type: "command"}, From: map[string]job.StepRef{"model": {Step: "train", Output: "m"}}},
	}}
	d := &api.RunDetail{Run: job.Run{ID: "pl", Status: job.Failed, Spec: job.Spec{Type: "pipeline", Pipeline: graph}},
		Outputs: []string{"final"},
		Pipeline: &api.PipelineDetail{Reason: "step train failed; score skipped", Steps: []api.PipelineStep{
			{Name: "prep", State: "completed", ReusedFrom: "old_prep", Compute: "local"},
			{Name: "train", State: "failed", RunID: "pl_train", Status: job.Failed, Compute: "gpu", Started: &t0, Ended: &t1,
				Reason: "exit code 1"},
			{Name: "score", State: "skipped", Reason: "train failed"},
		}}}
	var b strings.Builder
	if err := showJob(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Steps completed:", "1 of 3", "Pipeline done:", "step train failed; score skipped", "Steps:",
		"✓ prep", "completed (reused)", "train", "failed 1m30s", "score", "skipped", "← train",
		"reused from old_prep", "pl_train", "exit code 1", "train failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("job show lacks %q:\n%s", want, out)
		}
	}
	// A pipeline has its steps' outputs, and no artifacts of its own.
	if !strings.Contains(out, "named output: final") || strings.Contains(out, "artifacts: outputs/") {
		t.Errorf("job show of a pipeline: want its named output and no artifacts line:\n%s", out)
	}
	b.Reset()
	step := &api.RunDetail{Run: job.Run{ID: "pl_train", Status: job.Failed}, PipelineOf: &api.PipelineOf{Pipeline: "pl", Step: "train"}}
	if err := showJob(&b, step); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "Pipeline:") || !strings.Contains(out, "pl (step train)") {
		t.Errorf("job show of a step lacks its pipeline:\n%s", out)
	}
}
