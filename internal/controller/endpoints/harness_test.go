package endpoints

import (
	"context"
	"encoding/base64"
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
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving/router"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// The harness: the serving package over a real run core, store and blob store (the fake
// backend for "local"), with what it asked of the run core recorded (nomad's scheduler
// harness) and the router's table it published kept.

// plainBox "seals" by base64: the keys' sealing is the secrets package's, not this test's.
type plainBox struct{}

func (plainBox) Encrypt(b []byte) (string, error) { return base64.StdEncoding.EncodeToString(b), nil }
func (plainBox) Decrypt(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

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

// recordingRuns is the run core as the serving package sees it, recording each call:
// "queue <endpoint>/<deployment>" (a replica), "create <name>", "cancel <run>".
type recordingRuns struct {
	Runs
	mu    sync.Mutex
	asked []string
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

func (r *recordingRuns) Create(ctx context.Context, req api.CreateJobRequest) (*job.Run, error) {
	r.record("create " + req.Spec.Name)
	return r.Runs.Create(ctx, req)
}

func (r *recordingRuns) Cancel(ctx context.Context, id string) (*job.Run, error) {
	r.record("cancel " + id)
	return r.Runs.Cancel(ctx, id)
}

// calls is what was asked so far.
func (r *recordingRuns) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

type fixture struct {
	s     *Serving
	ctrl  *controller.Controller
	runs  *recordingRuns
	clock *clock
	// table is the router's table the last pass published.
	table router.Table
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
	clk := &clock{now: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)}
	for _, tg := range compute.Builtin(clk.Now()) {
		if err := st.Cluster.EnsureCompute(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctrl := controller.New(controller.Config{
		Store: st, Blobs: blobs,
		Backends: map[string]backend.Backend{compute.TypeLocal: backendtest.New()},
		Creators: map[string]controller.Creator{"command": controller.CommandJob, "parallel": controller.ParallelJob,
			"sweep": controller.SweepJob, "pipeline": controller.PipelineJob},
		Tokens: tokens.Run{Key: []byte("test key")}, Secrets: plainBox{},
		Settings: controller.Settings{StaleAfter: 15 * time.Second, NotRespondingAfter: 60 * time.Second},
		Log:      log, Now: clk.Now,
	})
	f := &fixture{ctrl: ctrl, runs: &recordingRuns{Runs: ctrl}, clock: clk}
	f.s = New(Deps{Store: Store{Serving: st.Serving, Runs: st.Runs, Cluster: st.Cluster}, Runs: f.runs, Resolver: ctrl.Workspace, Secrets: plainBox{}, Key: ctrl.Tokens.Key, Now: clk.Now, Log: log},
		router.Config{Log: log})
	f.s.publish = func(t router.Table) { f.table = t }
	return f
}

// create queues a command job through the run core and returns its run.
func (f *fixture) create(t testing.TB, sp job.Spec) *job.Run {
	t.Helper()
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

// report applies a supervisor report at the clock's time.
func (f *fixture) report(t testing.TB, id string, state job.State) {
	t.Helper()
	if _, err := f.ctrl.Report(t.Context(), id, api.StatusReport{State: state, Time: f.clock.Now()}); err != nil {
		t.Fatalf("Report %s: %v", state, err)
	}
}

// putTree stores files as blobs and their manifest, and returns the manifest's hash.
func putTree(t testing.TB, f *fixture, files map[string]string) string {
	t.Helper()
	m := &snapshot.Manifest{}
	dirs := map[string]bool{}
	for p, content := range files {
		h, err := f.ctrl.Blobs.PutBytes([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		m.Entries = append(m.Entries, snapshot.Entry{Path: p, Type: snapshot.TypeFile, Hash: h, Size: int64(len(content)), Mode: 0o644})
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			if !dirs[d] {
				dirs[d] = true
				m.Entries = append(m.Entries, snapshot.Entry{Path: d, Type: snapshot.TypeDir, Mode: 0o755})
			}
		}
	}
	data, hash, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ctrl.Blobs.PutBytes(data); err != nil {
		t.Fatal(err)
	}
	return hash
}

func createModel(t testing.TB, f *fixture, sp model.Spec, manifest string) *model.Version {
	t.Helper()
	v, err := f.ctrl.Workspace.Models.Create(t.Context(), api.CreateModelRequest{Spec: sp, Manifest: manifest})
	if err != nil {
		t.Fatalf("CreateModel(%+v): %v", sp, err)
	}
	return v
}

// wantKind fails unless err is a controller *Error of kind k whose message contains every part.
func wantKind(t testing.TB, err error, k controller.Kind, parts ...string) {
	t.Helper()
	var e *controller.Error
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

// notUploaded is a valid blob hash that no test stores.
const notUploaded = "0000000000000000000000000000000000000000000000000000000000000001"
