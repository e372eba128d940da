package supervisor

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

// A renewed token reaches the config file (for a stand-in), but never once it was removed: a
// heartbeat answered after the end cannot put it back.
func TestSaveTokenNeverAfterForget(t *testing.T) {
	s := newTestSupervisor(t, "http://127.0.0.1:1", 0)
	if err := os.MkdirAll(s.cfg.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.cfg.Dir, ConfigFile)
	if err := os.WriteFile(path, []byte(`{"run_id":"r","token":"old"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	token := func() string {
		var c struct{ Token string }
		if err := json.Unmarshal([]byte(readFileT(t, path)), &c); err != nil {
			t.Fatal(err)
		}
		return c.Token
	}
	s.renew("fresh")
	if got := token(); got != "fresh" {
		t.Errorf("after a renewal the config holds %q", got)
	}
	s.forgetToken()
	s.saveToken("late")
	if got := token(); got != "" {
		t.Errorf("after forgetToken the config holds %q", got)
	}
}

// A stand-in without the run's token (the supervisor had finished, or never started) still
// writes the result, saying why nothing was sent.
func TestSalvageWithoutTokenWritesTheResult(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(`{"run_id":"r"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res := Salvage(t.Context(), dir, "the supervisor is gone; ended 2 leftover processes of the run", slog.New(slog.DiscardHandler))
	var onDisk job.Result
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(dir, ResultFile))), &onDisk); err != nil {
		t.Fatal(err)
	}
	if onDisk.State != job.Failed || onDisk.Reason != res.Reason ||
		!strings.HasPrefix(res.Reason, "the supervisor is gone; ended 2 leftover processes of the run; ") ||
		!strings.Contains(res.Reason, "could not be collected: the run's token is gone") {
		t.Errorf("result %+v, on disk %+v", res, onDisk)
	}
}
