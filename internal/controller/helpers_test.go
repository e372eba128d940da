package controller

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pipeline"
	"github.com/hangar-ml/hangar/internal/store"
	hpo "github.com/hangar-ml/hangar/internal/sweep"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// storeAll selects every run.
var storeAll = store.RunFilter{}

// clock is a settable time source for Controller.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// fixture is a controller over a real store and blob store, with the fake backend for "local".
type fixture struct {
	c     *Controller
	fake  *backendtest.Fake
	clock *clock
	// sweepDecide and pipelineDecide are the parent loop's engines (parentloop_test.go): the
	// real ones unless a test scripts them.
	sweepDecide    func(hpo.Config, hpo.State) hpo.Decision
	pipelineDecide func(job.PipelineRun, pipeline.State) pipeline.Decision
}

// jobCreators are the job types' creators, as lead.go registers them.
var jobCreators = map[string]Creator{"command": CommandJob, "parallel": ParallelJob, "sweep": SweepJob, "pipeline": PipelineJob}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "workspace.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	for _, tg := range compute.Builtin(clk.Now()) {
		if err := st.Cluster.EnsureCompute(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	fake := backendtest.New()
	c := New(Config{
		Store: st, Blobs: blobs,
		Backends: map[string]backend.Backend{compute.TypeLocal: fake},
		Creators: jobCreators,
		Tokens:   tokens.Run{Key: []byte("test key")},
		Settings: Settings{StaleAfter: 15 * time.Second, NotRespondingAfter: 60 * time.Second},
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:      clk.Now,
	})
	return &fixture{c: c, fake: fake, clock: clk}
}

// create queues a command job and returns its run.
func (f *fixture) create(t testing.TB, sp job.Spec) *job.Run {
	t.Helper()
	if sp.Command == "" {
		sp.Command = "echo hi"
	}
	r, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: sp})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return r
}

func (f *fixture) run(t testing.TB, id string) *job.Run {
	t.Helper()
	r, err := f.c.Store.Runs.Run(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) reconcile(t testing.TB) {
	t.Helper()
	if err := f.c.reconcile(t.Context()); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	f.c.calls.wait() // the backend calls it started, and their effects
}

// report applies a supervisor report at the clock's time.
func (f *fixture) report(t testing.TB, id string, state job.State) *api.StatusReply {
	t.Helper()
	reply, err := f.c.Report(t.Context(), id, api.StatusReport{State: state, Time: f.clock.Now()})
	if err != nil {
		t.Fatalf("Report %s: %v", state, err)
	}
	return reply
}

// transitions lists a run's events as "From->To" (NotStarted's creation has no From).
func (f *fixture) transitions(t testing.TB, id string) []string {
	t.Helper()
	evs, err := f.c.Store.Runs.Events(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, string(e.From)+"->"+string(e.To))
	}
	return out
}

// wantKind fails unless err is a controller *Error of kind k whose message contains every part.
func wantKind(t testing.TB, err error, k Kind, parts ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want a controller error of kind %d", err, err, k)
	}
	if e.Kind != k {
		t.Errorf("error %q has kind %d, want %d", e.Msg, e.Kind, k)
	}
	for _, p := range parts {
		if !strings.Contains(e.Msg, p) {
			t.Errorf("error %q does not mention %q", e.Msg, p)
		}
	}
}
