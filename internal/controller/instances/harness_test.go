package instances

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/secrets"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// The harness: the instances package over a real run core, store, blob store and secret box
// (the fake backend for "local"), with what it asked of the run core recorded (nomad's
// scheduler harness).

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

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

// recordingRuns is the run core as the instances package sees it, recording "queue <display
// name>" (a setup script) and "cancel <run>", and counting kicks.
type recordingRuns struct {
	Runs
	mu    sync.Mutex
	asked []string
	kicks int
}

func (r *recordingRuns) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, s)
}

func (r *recordingRuns) Queue(ctx context.Context, sp job.Spec) (*job.Run, error) {
	r.record("queue " + sp.DisplayName)
	return r.Runs.Queue(ctx, sp)
}

func (r *recordingRuns) Cancel(ctx context.Context, id string) (*job.Run, error) {
	r.record("cancel " + id)
	return r.Runs.Cancel(ctx, id)
}

func (r *recordingRuns) Kick() {
	r.mu.Lock()
	r.kicks++
	r.mu.Unlock()
	r.Runs.Kick()
}

// calls is what was asked so far, and how many kicks.
func (r *recordingRuns) calls() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...), r.kicks
}

type fixture struct {
	m     *Manager
	ctrl  *controller.Controller
	runs  *recordingRuns
	box   *secrets.Box
	clock *clock
}

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
	box, err := secrets.OpenBox(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)}
	for _, tg := range compute.Builtin(clk.Now()) {
		if err := st.Cluster.EnsureCompute(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{box: box, clock: clk}
	f.start(st, blobs, map[string]backend.Backend{compute.TypeLocal: backendtest.New(), compute.TypeInstance: backendtest.New()})
	return f
}

// start makes the run core and the instances' owner over a store and blobs.
func (f *fixture) start(st *store.Store, blobs *blob.Store, backends map[string]backend.Backend) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.ctrl = controller.New(controller.Config{
		Store: st, Blobs: blobs, Backends: backends,
		Creators: map[string]controller.Creator{"command": controller.CommandJob, "parallel": controller.ParallelJob,
			"sweep": controller.SweepJob, "pipeline": controller.PipelineJob},
		Tokens: tokens.Run{Key: []byte("test key")}, Secrets: f.box,
		Settings: controller.Settings{StaleAfter: 15 * time.Second, NotRespondingAfter: 60 * time.Second},
		Log:      log, Now: f.clock.Now,
	})
	f.runs = &recordingRuns{Runs: f.ctrl}
	f.m = New(Store{Instances: st.Instances, Cluster: st.Cluster, Runs: st.Runs}, f.runs, f.box, f.clock.Now, log)
}

// restart is a new run core and instances' owner over the same store and blobs: all a server
// killed with -9 keeps.
func (f *fixture) restart() {
	f.start(f.ctrl.Store, f.ctrl.Blobs, map[string]backend.Backend{compute.TypeLocal: backendtest.New(),
		compute.TypeInstance: backendtest.New()})
}

// create queues a command job through the run core and returns its run.
func (f *fixture) create(t testing.TB, sp job.Spec) *job.Run {
	t.Helper()
	if sp.Command == "" {
		sp.Command = "echo hi"
	}
	r, err := f.ctrl.Create(t.Context(), api.CreateJobRequest{Spec: sp})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return r
}

func (f *fixture) run(t testing.TB, id string) *job.Run {
	t.Helper()
	r, err := f.ctrl.Store.Runs.Run(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
