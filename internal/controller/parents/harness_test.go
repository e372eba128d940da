package parents

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// harness stands for the run core and the resolver: it records what the loop asked of them,
// and does nothing else (nomad's scheduler harness), so a test reads the loop's decisions as a
// list of asks.
type harness struct {
	mu   sync.Mutex
	asks []string
}

func (h *harness) ask(format string, a ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asks = append(h.asks, fmt.Sprintf(format, a...))
}

func (h *harness) Transition(_ context.Context, id string, to job.State, reason string) (*job.Run, error) {
	h.ask("transition %s %s: %s", id, to, reason)
	return &job.Run{ID: id, Status: to}, nil
}

func (h *harness) CreateTrialRun(_ context.Context, p *job.Run, index int, params json.RawMessage, _ job.Spec) error {
	h.ask("create trial %s %d %s", p.ID, index, params)
	return nil
}

func (h *harness) CreateStepRun(_ context.Context, p *job.Run, step, _ string, _ job.Spec) error {
	h.ask("create step %s %s", p.ID, step)
	return nil
}

func (h *harness) SetNamedOutputs(_ context.Context, id string, named map[string]string) error {
	h.ask("named outputs %s %v", id, named)
	return nil
}

func (h *harness) Changed(string)                                                      {}
func (h *harness) Kick()                                                               {}
func (h *harness) OnChange(func(string))                                               {}
func (h *harness) ResolveStartData(context.Context, *job.Run, string, *job.Spec) error { return nil }

func (h *harness) ResolveStepInput(_ context.Context, _ job.PipelineRun, step, in string, ref job.StepRef, src string) (job.Input, error) {
	h.ask("bind %s.%s to %s's %s", step, in, src, ref.Output)
	return job.Input{Type: "uri_folder", Path: "azureml://jobs/" + src + "/outputs/" + ref.Output}, nil
}

// newHarness is the loop over a real store (the parents' tables) and the harness.
func newHarness(t *testing.T) (*Loop, *harness, *store.Store) {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "workspace.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{}
	now := func() time.Time { return time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC) }
	return New(Config{Runs: h, Resolver: h, Store: st.Parents, Reader: st.Runs, Now: now}), h, st
}

// A queued pipeline's pass asks for its first step's run and moves the pipeline to Running;
// the step that reads it waits.
func TestPipelinePassAsksForItsFirstStep(t *testing.T) {
	l, h, st := newHarness(t)
	step := func(from map[string]job.StepRef) job.PipelineStep {
		return job.PipelineStep{Spec: job.Spec{Command: "true", Compute: "local",
			Outputs: map[string]job.Output{"o": {Type: "uri_folder"}}}, From: from, Deterministic: true}
	}
	p := &job.Run{ID: "pl", Status: job.Queued, CreatedAt: time.Now().UTC(), Attempt: 1, Compute: "local",
		Spec: job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{Steps: map[string]job.PipelineStep{
			"prep":  step(nil),
			"train": step(map[string]job.StepRef{"d": {Step: "prep", Output: "o"}}),
		}}}}
	if err := st.RunWrites.CreatePipeline(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if err := l.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := []string{"create step pl prep", "transition pl Running: pipeline: running its steps"}
	if fmt.Sprint(h.asks) != fmt.Sprint(want) {
		t.Errorf("the loop asked %q, want %q", h.asks, want)
	}
}

// A canceled parent with no child running is Canceled, and nothing else is asked.
func TestCanceledPipelineEnds(t *testing.T) {
	l, h, st := newHarness(t)
	p := &job.Run{ID: "pl", Status: job.CancelRequested, CreatedAt: time.Now().UTC(), Attempt: 1, Compute: "local",
		Spec: job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{Steps: map[string]job.PipelineStep{
			"prep": {Spec: job.Spec{Command: "true", Compute: "local"}},
		}}}}
	if err := st.RunWrites.CreatePipeline(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if err := l.PipelinePass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(h.asks) != 1 || h.asks[0][:len("transition pl Canceled")] != "transition pl Canceled" {
		t.Errorf("the loop asked %q, want the pipeline Canceled alone", h.asks)
	}
}
