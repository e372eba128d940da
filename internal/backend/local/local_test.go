package local

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/proc"
	"github.com/hangar-ml/hangar/internal/runbox"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// A fake `hangar` binary: started as `<exe> supervise --config <file>` in the run directory.
const (
	// sleeper records its arguments and environment, then waits for SIGTERM, which it records.
	sleeper = `#!/bin/bash
` + noReap + `
echo "$@" > args.txt
env > env.txt
trap 'kill $child 2>/dev/null; echo term > terminated; exit 0' TERM
sleep 60 &
child=$!
echo ready > ready
wait $child
`
	// finisher writes a result file and exits at once.
	finisher = `#!/bin/bash
` + noReap + `
printf '{"state":"Failed","exit_code":3,"reason":"the command exited with code 3","time":"2025-01-02T03:04:05Z"}' > result.json.tmp
mv result.json.tmp result.json
`
	// quitter exits at once without a result.
	quitter = "#!/bin/bash\nexit 1\n"
	// noReap makes a fake fail `hangar reap`, so the backend ends the processes itself.
	noReap = `[ "$1" = reap ] && exit 1`
)

func newBackend(t testing.TB, script string) *Backend {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "hangar")
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Backend{
		Root: filepath.Join(t.TempDir(), "local"), Exe: exe,
		ServerURL: func() string { return "http://127.0.0.1:8700" }, ServerURLFile: "/ws/server.json",
		BlobDir: "/ws/blobs", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// submit starts a run's supervisor; the test ends by killing what is left of its session.
func submit(t testing.TB, b *Backend, runID string) (backend.Handle, handle) {
	t.Helper()
	hb, err := b.Submit(t.Context(), backend.Launch{RunID: runID, Token: runID + ".secret-token",
		Target: compute.Target{Name: "local", Type: compute.TypeLocal}, Spec: job.Spec{Command: "true"}})
	if err != nil {
		t.Fatal(err)
	}
	var h handle
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatalf("handle %s: %v", hb, err)
	}
	if h.PID > 0 {
		// The supervisor leads its own session: kill that process group (ours) when the test ends.
		// It must be gone before the run's directory is removed (a write racing the removal
		// fails the test's cleanup).
		t.Cleanup(func() {
			if h.Alive() {
				_ = syscall.Kill(-h.PID, syscall.SIGKILL)
			}
			for deadline := time.Now().Add(10 * time.Second); h.Alive() && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	return hb, h
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func status(t testing.TB, b *Backend, h backend.Handle) backend.Status {
	t.Helper()
	st, err := b.Status(t.Context(), h)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSubmitStartsSupervisor(t *testing.T) {
	t.Setenv("HANGAR_TOKEN", "admin-token")
	t.Setenv("HANGAR_URL", "http://elsewhere")
	t.Setenv("HANGAR_TEST_MARK", "kept")
	b := newBackend(t, sleeper)
	b.ObjectCacheBytes = 5 << 30
	hb, h := submit(t, b, "run-1")
	dir := b.RunDir("run-1")
	testwait.For(t, "the supervisor to start", func() bool { return exists(filepath.Join(dir, "ready")) })

	// The handle is serialisable and names the live process.
	if h.PID <= 0 || h.Dir != dir || h.StartTime == 0 || h.StartTime != node.ProcessStartTime(h.PID) {
		t.Errorf("handle %+v (start time now %d)", h, node.ProcessStartTime(h.PID))
	}
	var back handle
	if err := json.Unmarshal(hb, &back); err != nil || back != h {
		t.Errorf("handle round trip: %+v, %v", back, err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "handle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk handle
	if err := json.Unmarshal(saved, &onDisk); err != nil || onDisk != h {
		t.Errorf("handle.json = %s, want %+v", saved, h)
	}

	// The config holds the run token, so only the user may read it.
	cfgPath := filepath.Join(dir, "supervisor.json")
	st, err := os.Stat(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("supervisor.json mode %o, want 600", st.Mode().Perm())
	}
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg api.SupervisorConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	want := api.SupervisorConfig{
		RunID: "run-1", Token: "run-1.secret-token", ServerURL: "http://127.0.0.1:8700", ServerURLFile: "/ws/server.json",
		Dir: dir, CacheDir: filepath.Join(b.Root, "cache", "blobs"), LocalBlobDir: "/ws/blobs", ObjectCacheBytes: 5 << 30,
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("supervisor config (-want +got):\n%s", diff)
	}
	args, err := os.ReadFile(filepath.Join(dir, "args.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(args)); got != "supervise --config "+cfgPath {
		t.Errorf("supervisor arguments %q", got)
	}
	env, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(env); strings.Contains(s, "HANGAR_TOKEN=") || strings.Contains(s, "HANGAR_URL=") || !strings.Contains(s, "HANGAR_TEST_MARK=kept") {
		t.Errorf("supervisor environment: admin credentials must be dropped, the rest kept:\n%s", s)
	}
	if !exists(filepath.Join(dir, "system_logs")) {
		t.Error("no system_logs directory")
	}

	if diff := cmp.Diff(backend.Status{Alive: true}, status(t, b, hb)); diff != "" {
		t.Errorf("status of a running supervisor (-want +got):\n%s", diff)
	}

	// Submitting again while it is alive re-attaches.
	hb2, h2 := submit(t, b, "run-1")
	if h2 != h || string(hb2) != string(hb) {
		t.Errorf("second Submit returned %s, want the same handle %s", hb2, hb)
	}
}

func TestCancelSendsSIGTERM(t *testing.T) {
	b := newBackend(t, sleeper)
	hb, _ := submit(t, b, "run-1")
	dir := b.RunDir("run-1")
	testwait.For(t, "the supervisor to start", func() bool { return exists(filepath.Join(dir, "ready")) })
	if err := b.Cancel(t.Context(), hb); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the supervisor to get SIGTERM", func() bool { return exists(filepath.Join(dir, "terminated")) })
	testwait.For(t, "the supervisor to exit", func() bool { return !status(t, b, hb).Alive })
	want := backend.Status{Reason: "the supervisor process is gone and left no result; no process of the run was left running"}
	if diff := cmp.Diff(want, status(t, b, hb)); diff != "" {
		t.Errorf("status after cancel (-want +got):\n%s", diff)
	}
	if err := b.Cancel(t.Context(), hb); err != nil {
		t.Errorf("Cancel of an exited supervisor: %v", err)
	}
}

func TestStatusReadsResult(t *testing.T) {
	b := newBackend(t, finisher)
	hb, h := submit(t, b, "run-1")
	testwait.For(t, "the supervisor to exit", func() bool { return !status(t, b, hb).Alive })
	exit := 3
	want := backend.Status{Final: &job.Result{
		State: job.Failed, ExitCode: &exit, Reason: "the command exited with code 3", Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}}
	if diff := cmp.Diff(want, status(t, b, hb)); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	// A new Submit after the supervisor is gone starts a new one.
	hb2, h2 := submit(t, b, "run-1")
	if h2 == h {
		t.Errorf("Submit after exit returned the old handle %+v", h)
	}
	// It writes its result into the run's directory: let it finish before the directory goes
	// (CI met the cleanup racing its write).
	testwait.For(t, "the second supervisor to exit", func() bool { return !status(t, b, hb2).Alive })
}

func TestStatusOfVanishedSupervisor(t *testing.T) {
	b := newBackend(t, quitter)
	hb, _ := submit(t, b, "run-1")
	testwait.For(t, "the supervisor to exit", func() bool { return !status(t, b, hb).Alive })
	// A result file that cannot be read as one does not count as a result.
	if err := os.WriteFile(filepath.Join(b.RunDir("run-1"), ResultFile), []byte("{trunc"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := backend.Status{Reason: "the supervisor process is gone and left no result; no process of the run was left running"}
	if diff := cmp.Diff(want, status(t, b, hb)); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestAliveChecksStartTime(t *testing.T) {
	me := os.Getpid()
	tests := []struct {
		name string
		h    handle
		want bool
	}{
		{"this process", handle{Proc: proc.Of(me)}, true},
		{"start time unknown", handle{Proc: proc.Proc{PID: me}}, true},
		{"pid reused by another process", handle{Proc: proc.Proc{PID: me, StartTime: node.ProcessStartTime(me) + 1}}, false},
		{"no pid", handle{}, false},
		{"no such process", handle{Proc: proc.Proc{PID: 1 << 30}}, false},
	}
	for _, tt := range tests {
		if got := tt.h.Alive(); got != tt.want {
			t.Errorf("%s: alive(%+v) = %v, want %v", tt.name, tt.h, got, tt.want)
		}
	}
}

func TestBadHandleAndExe(t *testing.T) {
	b := newBackend(t, quitter)
	if _, err := b.Status(t.Context(), []byte("not json")); err == nil {
		t.Error("Status accepted a handle that is not JSON")
	}
	if err := b.Cancel(t.Context(), []byte("not json")); err == nil {
		t.Error("Cancel accepted a handle that is not JSON")
	}
	b.Exe = filepath.Join(t.TempDir(), "missing")
	if _, err := b.Submit(t.Context(), backend.Launch{RunID: "r"}); err == nil || !strings.Contains(err.Error(), "start supervisor") {
		t.Errorf("Submit with a missing binary = %v", err)
	}
}

// A supervisor killed with its command still running: Status, which notices the loss, ends the
// command's processes and says how many.
func TestStatusEndsWhatALostSupervisorLeft(t *testing.T) {
	b := newBackend(t, quitter)
	dir := b.RunDir("run-lost")
	rec := runbox.RecordPath(dir)
	if err := os.MkdirAll(filepath.Dir(rec), 0o700); err != nil {
		t.Fatal(err)
	}
	marker := "marker-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(rec, []byte(`{"run_id":"run-lost","marker":"`+marker+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	left := exec.Command("setsid", "sleep", "300") // the user's command, out of any group
	left.Env = append(os.Environ(), runbox.MarkerVar+"="+marker)
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	defer left.Process.Kill()
	testwait.For(t, "setsid to exec sleep", func() bool {
		c, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(left.Process.Pid), "cmdline"))
		return strings.HasPrefix(string(c), "sleep")
	})
	hb, _ := submit(t, b, "run-lost")
	testwait.For(t, "the supervisor to exit", func() bool { return !mustHandle(t, hb).Alive() })
	st := status(t, b, hb)
	if !strings.HasSuffix(st.Reason, "ended 1 leftover process of the run") {
		t.Errorf("reason %q does not say the leftover was ended", st.Reason)
	}
	testwait.For(t, "the leftover to die", func() bool {
		s, ok := node.Stat(left.Process.Pid)
		return !ok || s.State == 'Z'
	})
}

func mustHandle(t *testing.T, hb backend.Handle) handle {
	t.Helper()
	var h handle
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatal(err)
	}
	return h
}
