package local

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/proc"
)

// A run whose supervisor another machine started (a replicated workspace's earlier leader, its
// directory shared) is not this server's to see: Status neither calls it gone nor reaps it (a
// pid here is another process) but says it cannot see it (the controller then treats the run as
// on a host that does not answer), Cancel signals nothing here, and Submit does not start a second.
func TestHandleOfAnotherMachine(t *testing.T) {
	b := newBackend(t, quitter)
	dir := b.RunDir("run1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A process of this machine that the foreign pid happens to name.
	bystander := exec.Command("sleep", "60")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer bystander.Process.Kill()
	h := handle{Proc: proc.Of(bystander.Process.Pid), Dir: dir, Machine: "elsewhere/0123"}
	hb, _ := json.Marshal(h)
	if err := os.WriteFile(filepath.Join(dir, "handle.json"), hb, 0o644); err != nil {
		t.Fatal(err)
	}

	st, err := b.Status(t.Context(), hb)
	if err == nil || !strings.Contains(err.Error(), "machine elsewhere/0123") || st.Final != nil || st.Reason != "" {
		t.Fatalf("Status of a foreign run without a result = %+v, %v; want an error naming its machine, the run untouched", st, err)
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("Status of a foreign run ended a process of this machine: %v", err)
	}
	if err := b.Cancel(t.Context(), hb); err != nil {
		t.Fatal(err)
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("Cancel of a foreign run signalled a process of this machine: %v", err)
	}
	got, err := b.Submit(t.Context(), backend.Launch{RunID: "run1"})
	if err != nil || string(got) != string(hb) {
		t.Fatalf("Submit again = %s, %v; want the foreign handle as it is", got, err)
	}

	res := `{"state":"Completed","exit_code":0,"time":"2026-11-25T03:00:00Z"}`
	if err := os.WriteFile(filepath.Join(dir, ResultFile), []byte(res), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = b.Status(t.Context(), hb)
	if err != nil || st.Alive || st.Final == nil || st.Final.State != job.Completed {
		t.Fatalf("Status once its result is written = %+v, %v", st, err)
	}
}
