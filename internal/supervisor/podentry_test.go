package supervisor

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// fakeHangar is a stand-in for the hangar binary: `supervise` does what SUPERVISE says (write a
// result, or exit 9 without one), `reap` writes the stand-in's result with its --why.
const fakeHangar = `#!/bin/sh
case "$1" in
supervise)
  dir=$(dirname "$3")
  cp "$3" "$dir/seen-config.json"
  if [ "$SUPERVISE" = result ]; then
    echo '{"state":"Completed","exit_code":0,"reason":"the command exited with code 0","time":"2026-11-24T06:00:00Z"}' > "$dir/result.json"
    exit 0
  fi
  exit 9 ;;
reap)
  # reap --run ID --dir DIR --why WHY
  printf '{"state":"Failed","reason":"%s; reaped","time":"2026-11-24T06:00:01Z"}' "$7" > "$5/result.json"
  echo '{"ended":1}' ;;
esac
`

func entryFixture(t *testing.T, rankEnv string) (PodEntry, string) {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "hangar")
	if err := os.WriteFile(exe, []byte(fakeHangar), 0o755); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "runs", "r1")
	cfg, _ := json.Marshal(api.SupervisorConfig{RunID: "r1", Token: "t", Dir: runDir,
		Nodes: []string{"hangar-r1-0.hangar-r1", "hangar-r1-1.hangar-r1"}})
	cfgPath := filepath.Join(dir, "supervisor.json")
	if err := os.WriteFile(cfgPath, cfg, 0o400); err != nil {
		t.Fatal(err)
	}
	return PodEntry{Exe: exe, Config: cfgPath, RankEnv: rankEnv, TerminationLog: filepath.Join(dir, "termination-log"),
		Log: slog.New(slog.DiscardHandler)}, runDir
}

func terminationResult(t *testing.T, e PodEntry) job.Result {
	t.Helper()
	data, err := os.ReadFile(e.TerminationLog)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := job.ParseResult(data)
	if !ok {
		t.Fatalf("termination message %q is no result", data)
	}
	return *r
}

func TestPodEntry(t *testing.T) {
	t.Run("the supervisor's result, this pod's rank", func(t *testing.T) {
		t.Setenv("SUPERVISE", "result")
		t.Setenv("JOB_COMPLETION_INDEX", "1")
		e, runDir := entryFixture(t, "JOB_COMPLETION_INDEX")
		if code := e.Run(t.Context()); code != 0 {
			t.Errorf("exit %d, want 0 for a completed run", code)
		}
		if r := terminationResult(t, e); r.State != job.Completed || r.Reason != "the command exited with code 0" {
			t.Errorf("termination message %+v", r)
		}
		var seen api.SupervisorConfig
		data, _ := os.ReadFile(filepath.Join(runDir, "seen-config.json"))
		if err := json.Unmarshal(data, &seen); err != nil || seen.NodeRank != 1 || seen.Token != "t" {
			t.Errorf("the supervisor's config %+v (%v): want node rank 1 from JOB_COMPLETION_INDEX", seen, err)
		}
	})
	t.Run("a lost supervisor is reaped", func(t *testing.T) {
		t.Setenv("SUPERVISE", "die")
		e, _ := entryFixture(t, "")
		if code := e.Run(t.Context()); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		r := terminationResult(t, e)
		if r.State != job.Failed || r.Reason != "the supervisor ended without a result (exit code 9); reaped" {
			t.Errorf("termination message %+v", r)
		}
	})
	t.Run("a rank that is not the run's", func(t *testing.T) {
		t.Setenv("JOB_COMPLETION_INDEX", "2")
		e, _ := entryFixture(t, "JOB_COMPLETION_INDEX")
		e.Run(t.Context())
		if r := terminationResult(t, e); r.State != job.Failed || !strings.Contains(r.Reason, `JOB_COMPLETION_INDEX="2" is not a node rank of this run`) {
			t.Errorf("termination message %+v", r)
		}
	})
}

// A long reason is shortened so that the message fits what Kubernetes keeps, and stays a result.
func TestTerminationMessageFits(t *testing.T) {
	code := 1
	r := job.Result{State: job.Failed, ExitCode: &code, Reason: strings.Repeat(`a "quoted" reason `, 400)}
	msg := TerminationMessage(r)
	got, ok := job.ParseResult(msg)
	if len(msg) > terminationMax || !ok || got.State != job.Failed || !strings.HasSuffix(got.Reason, "...") {
		t.Errorf("%d bytes, parsed %v %+v", len(msg), ok, got)
	}
}
