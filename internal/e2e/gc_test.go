package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
)

// workspace gc frees the blobs nothing references once they are older than the grace: a
// deleted job's outputs, uploaded a moment ago, stay under the default grace (a job being
// submitted may be about to name what it just uploaded), are listed by --dry-run with their
// size, and go when the grace allows; another job's files stay and download. Only owners may
// collect.
func TestWorkspaceGC(t *testing.T) {
	w := newWS(t)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"gone.yml": "command: head -c 300000 /dev/urandom > outputs/weights.bin\n",
		"kept.yml": "command: echo kept > outputs/kept.txt\n",
	})
	gone, kept := w.create(filepath.Join(src, "gone.yml")), w.create(filepath.Join(src, "kept.yml"))
	w.waitStatus(gone, 2*time.Minute, job.Completed)
	w.waitStatus(kept, 2*time.Minute, job.Completed)
	out := t.TempDir()
	w.ok("job", "download", gone, "--download-path", out)
	weights, _, err := blob.HashFile(filepath.Join(out, gone, "artifacts", "outputs", "weights.bin"))
	if err != nil {
		t.Fatal(err)
	}
	blobs := filepath.Join(w.home, "blobs")
	stored := func() bool { _, err := os.Stat(filepath.Join(blobs, weights[:2], weights)); return err == nil }

	w.ok("job", "delete", gone, "--yes")
	if !stored() {
		t.Fatal("job delete freed an output uploaded within the grace")
	}
	if r := w.ok("workspace", "gc", "--dry-run").stdout; !strings.Contains(r, "Would free 0 blobs") {
		t.Errorf("gc --dry-run under the default grace:\n%s\nwant nothing to free", r)
	}
	var rep api.GCReport
	if err := json.Unmarshal([]byte(w.ok("workspace", "gc", "--dry-run", "--grace", "0s", "-o", "json").stdout), &rep); err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, b := range rep.Blobs {
		listed = listed || b.Hash == weights && b.Size == 300000
	}
	if !rep.DryRun || !listed || rep.Bytes < 300000 {
		t.Errorf("gc --dry-run --grace 0s = %+v, want the deleted job's weights (300000 bytes) listed", rep)
	}
	if !stored() {
		t.Fatal("a dry run freed a blob")
	}
	if r := w.ok("workspace", "gc", "--grace", "0s").stdout; !strings.Contains(r, "Freed ") {
		t.Errorf("gc --grace 0s:\n%s", r)
	}
	if stored() {
		t.Error("the deleted job's output is still stored")
	}
	out = t.TempDir()
	w.ok("job", "download", kept, "--all", "--download-path", out)
	if got := readFile(t, filepath.Join(out, kept, "artifacts", "outputs", "kept.txt")); got != "kept\n" {
		t.Errorf("the other job's output reads %q after gc", got)
	}

	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	carl := w.user(si.URL)
	token := strings.TrimSpace(w.ok("user", "create", "carl", "--role", "contributor").stdout)
	if r := carl.run(token, "login", "--with-token"); r.code != 0 {
		t.Fatalf("carl's login: exit %d, %s", r.code, r.stderr)
	}
	if r := carl.run("", "workspace", "gc"); r.code != 1 || !strings.Contains(r.stderr, "needs the role owner") {
		t.Errorf("a contributor's workspace gc: exit %d, %q; want 1 and a refusal naming the owner role", r.code, r.stderr)
	}
}
