package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// countSyncs replaces the store's fsync of its WAL with a counter (the fsync still happens). A
// sync of anything but the database's WAL, which exists while the store is open, fails the
// test: fsyncFile takes a missing file for one already synced, so a wrong name would sync
// nothing and count all the same.
func countSyncs(t *testing.T, s *Store, dbPath string) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	s.wal.fsync = func(path string) error {
		n.Add(1)
		if _, err := os.Stat(path); path != dbPath+"-wal" || err != nil {
			t.Errorf("synced %s (%v), want the database's WAL %s-wal", path, err, dbPath)
		}
		return fsyncFile(path)
	}
	return &n
}

func TestWhatIsForcedToTheDisk(t *testing.T) {
	sqliteOnly(t, "fsyncs and checkpoints of SQLite's WAL; a PostgreSQL commit is durable when it returns")
	dbPath := filepath.Join(t.TempDir(), "ws.db")
	s, err := Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	syncs := countSyncs(t, s, dbPath)
	at := time.Unix(1700000100, 0).UTC()
	set := func(fn func(r *job.Run)) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := s.RunWrites.UpdateRun(ctx, "r1", func(r *job.Run) ([]job.Event, error) { fn(r); return nil, nil })
			return err
		}
	}
	tests := []struct {
		name  string
		write func(ctx context.Context) error
		want  int64
	}{
		{"a run is created", func(ctx context.Context) error { createTestRun(t, s, "r1"); return nil }, 1},
		{"a heartbeat", func(ctx context.Context) error { return s.RunWrites.TouchRun(ctx, "r1", at) }, 0},
		{"a phase", set(func(r *job.Run) { r.Status = job.Running }), 0},
		{"a warning and timings", set(func(r *job.Run) { r.Warnings, r.Timings = []string{"w"}, map[string]float64{"x": 1} }), 0},
		{"its artifacts are registered", func(ctx context.Context) error {
			_, err := s.RunWrites.SetRunArtifacts(ctx, "r1", nil, "manifest", map[string]string{"model": "m"}, nil)
			return err
		}, 1},
		{"it ends", set(func(r *job.Run) { r.Status, r.EndedAt = job.Completed, &at }), 1},
		{"a late heartbeat", func(ctx context.Context) error { return s.RunWrites.TouchRun(ctx, "r1", at) }, 0},
		{"its log grows", func(ctx context.Context) error {
			_, err := s.Runs.AppendLogs(ctx, "r1", "std_log.txt", []job.LogLine{{Seq: 1, Text: "hi"}})
			return err
		}, 0},
	}
	for _, tt := range tests {
		before := syncs.Load()
		if err := tt.write(t.Context()); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := syncs.Load() - before; got != tt.want {
			t.Errorf("%s: %d fsyncs of the WAL, want %d", tt.name, got, tt.want)
		}
	}
}

func TestConcurrentSyncsShareOneFsync(t *testing.T) {
	sqliteOnly(t, "fsyncs and checkpoints of SQLite's WAL; a PostgreSQL commit is durable when it returns")
	s := open(t)
	var calls atomic.Int64
	release := make(chan struct{})
	s.wal.fsync = func(string) error {
		if calls.Add(1) == 1 {
			<-release // the first fsync is slow: everyone else queues behind it
		}
		return nil
	}
	const callers = 10
	var wg sync.WaitGroup
	start := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Sync(t.Context()); err != nil {
				t.Error(err)
			}
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s", what)
			}
		}
	}
	start()
	waitFor("the first fsync", func() bool { return calls.Load() == 1 })
	for range callers - 1 {
		start()
	}
	waitFor("every caller", func() bool { return s.wal.tickets.Load() == callers })
	close(release)
	wg.Wait()
	if got := calls.Load(); got != 2 {
		t.Errorf("%d callers made %d fsyncs, want 2 (the slow one, then one for all who waited)", callers, got)
	}
}

func TestCheckpointCopiesTheLogIntoTheDatabase(t *testing.T) {
	sqliteOnly(t, "fsyncs and checkpoints of SQLite's WAL; a PostgreSQL commit is durable when it returns")
	s := open(t)
	for i := range 20 {
		createTestRun(t, s, "r"+string(rune('a'+i)))
	}
	if err := s.checkpoint(t.Context()); err != nil {
		t.Fatal(err)
	}
	var busy, pages, done int
	if err := s.db.QueryRowContext(t.Context(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &pages, &done); err != nil {
		t.Fatal(err)
	}
	if pages == 0 || done != pages {
		t.Errorf("after a checkpoint the log has %d pages, %d of them in the database; want all", pages, done)
	}
	var auto int
	if err := s.db.QueryRowContext(t.Context(), `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != autoCheckpointPages {
		t.Errorf("wal_autocheckpoint = %d, want %d (the checkpoint goroutine does the work)", auto, autoCheckpointPages)
	}
}

func TestCloseTwice(t *testing.T) {
	s, err := Open(t.Context(), testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_ = s.Close() // a second Close must not panic
}

// writerEnv makes the test binary a writer process for TestNothingAcknowledgedIsLostOnKill: it
// writes to the database named by the variable and says on stdout what each write returned.
const writerEnv = "HANGAR_STORE_TEST_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(writerEnv); path != "" {
		if err := writeUntilKilled(context.Background(), path, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ackSteps are the writes a run gets from the writer, in order, as the server makes them for a
// trivial job: each is acknowledged (a line "<step> <run>") once the store returned.
var ackSteps = []string{"created", "touched", "running", "logged", "artifacts", "ended"}

// writeUntilKilled writes runs k0000, k0001, … through every step of ackSteps, acknowledging
// each on out, until it is killed (or out is gone, or 5,000 runs are written).
func writeUntilKilled(ctx context.Context, path string, out io.Writer) error {
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	at := time.Unix(1700000000, 0).UTC()
	for i := range 5000 {
		id := fmt.Sprintf("k%04d", i)
		for _, step := range ackSteps {
			if err := writeStep(ctx, s, id, step, at); err != nil {
				return fmt.Errorf("%s %s: %w", step, id, err)
			}
			if _, err := fmt.Fprintln(out, step, id); err != nil {
				return nil // the test stopped reading
			}
		}
	}
	return s.Close()
}

func writeStep(ctx context.Context, s *Store, id, step string, at time.Time) error {
	set := func(fn func(r *job.Run)) error {
		_, err := s.RunWrites.UpdateRun(ctx, id, func(r *job.Run) ([]job.Event, error) { fn(r); return nil, nil })
		return err
	}
	switch step {
	case "created":
		r := &job.Run{ID: id, Compute: "local", Status: job.Queued, CreatedAt: at,
			Spec: job.Spec{Type: "command", Command: "true"}, Attempt: 1}
		return s.RunWrites.CreateRun(ctx, r, job.Event{Time: at, To: job.Queued})
	case "touched":
		return s.RunWrites.TouchRun(ctx, id, at)
	case "running":
		return set(func(r *job.Run) { r.Status, r.StartedAt = job.Running, &at })
	case "logged":
		_, err := s.Runs.AppendLogs(ctx, id, "std_log.txt", []job.LogLine{{Seq: 1, Text: "hello from " + id, Time: at}})
		return err
	case "artifacts":
		_, err := s.RunWrites.SetRunArtifacts(ctx, id, nil, "manifest-"+id, map[string]string{"model": "m"}, nil)
		return err
	case "ended":
		code := 0
		return set(func(r *job.Run) { r.Status, r.EndedAt, r.ExitCode = job.Completed, &at, &code })
	}
	return fmt.Errorf("unknown step %q", step)
}

// A server killed with SIGKILL loses nothing it acknowledged: a writer process says what each
// write returned and is killed in the middle of its stream; the database it leaves opens, and
// holds every acknowledged write. (What a power loss may take is tested by counting the fsyncs:
// TestWhatIsForcedToTheDisk.) An acknowledgement before the commit, a commit queued for later,
// or a journal that a killed process leaves half-written would each fail here.
func TestNothingAcknowledgedIsLostOnKill(t *testing.T) {
	sqliteOnly(t, "fsyncs and checkpoints of SQLite's WAL; a PostgreSQL commit is durable when it returns")
	path := filepath.Join(t.TempDir(), "ws.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const killAfter = 60 // acknowledgements: ten runs through every step
	var acks []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		acks = append(acks, sc.Text())
		if len(acks) == killAfter {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	state, _ := cmd.Process.Wait()
	if len(acks) < killAfter {
		t.Fatalf("the writer stopped after %d acknowledgements (%v): %s", len(acks), state, stderr.String())
	}
	if ws, ok := state.Sys().(interface{ Signaled() bool }); !ok || !ws.Signaled() {
		t.Fatalf("the writer was not killed (%v) but ended: %s", state, stderr.String())
	}

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer s.Close()
	for _, a := range acks {
		step, id, _ := strings.Cut(a, " ")
		if err := acknowledged(t.Context(), s, id, step); err != nil {
			t.Errorf("acknowledged %q, lost after the kill: %v", a, err)
		}
	}
	t.Logf("%d writes acknowledged before the kill", len(acks))
}

// acknowledged checks that the database holds what step wrote to run id.
func acknowledged(ctx context.Context, s *Store, id, step string) error {
	r, err := s.Runs.Run(ctx, id)
	if err != nil {
		return err
	}
	switch step {
	case "touched":
		if r.LastHeartbeat.IsZero() {
			return fmt.Errorf("no heartbeat")
		}
	case "running":
		if r.StartedAt == nil {
			return fmt.Errorf("not started (%s)", r.Status)
		}
	case "logged":
		lines, err := s.Runs.Logs(ctx, id, "std_log.txt", 0, 10)
		if err != nil || len(lines) != 1 {
			return fmt.Errorf("log lines %v, %v", lines, err)
		}
	case "artifacts":
		if r.ArtifactsHash != "manifest-"+id {
			return fmt.Errorf("artifacts %q", r.ArtifactsHash)
		}
	case "ended":
		if r.Status != job.Completed || r.ExitCode == nil {
			return fmt.Errorf("status %s", r.Status)
		}
	}
	return nil
}
