package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// Local targets from YAML: require_container refuses jobs without an image, or on a node without
// a runtime; max_concurrent_runs queues the rest with a reason; delete refuses while runs are
// active unless --force.
func TestLocalComputeTargets(t *testing.T) {
	w := newWSEnv(t, []string{"HANGAR_CONTAINER_RUNTIME=none"}) // this node has no container runtime
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"strict.yml":  "name: strict\ntype: local\nrequire_container: true\n",
		"one.yml":     "name: one-at-a-time\ntype: local\nmax_concurrent_runs: 1\ndescription: serial\n",
		"noimage.yml": "command: echo hi\ncompute: azureml:strict\n",
		"image.yml":   "command: echo hi\ncompute: strict\nenvironment: {image: busybox}\n",
		"sleep.yml":   "command: echo started; sleep 30\ncompute: one-at-a-time\n",
		"bad.yml":     "name: bad\ntype: local\nmax_concurent_runs: 1\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "strict.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "one.yml"))
	if r := w.run("compute", "create", "-f", filepath.Join(dir, "one.yml")); r.code == 0 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("second create: exit %d %s", r.code, r.stderr)
	}
	if r := w.run("compute", "create", "-f", filepath.Join(dir, "bad.yml")); r.code == 0 || !strings.Contains(r.stderr, "max_concurent_runs") {
		t.Errorf("misspelled field: exit %d %s", r.code, r.stderr)
	}
	var cs []api.Compute
	// local, strict, one-at-a-time, and the serverless pool (this machine's: none is configured).
	if err := json.Unmarshal([]byte(w.ok("compute", "list", "-o", "json").stdout), &cs); err != nil || len(cs) != 4 {
		t.Fatalf("compute list: %v %v", cs, err)
	}
	if r := w.ok("compute", "show", "-n", "strict"); !strings.Contains(r.stdout, "Require container: true") {
		t.Errorf("compute show: %s", r.stdout)
	}
	for file, want := range map[string]string{
		"noimage.yml": "requires jobs to run in a container image",
		"image.yml":   "no container runtime",
	} {
		if r := w.run("job", "create", "-f", filepath.Join(dir, file)); r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", file, r.code, r.stderr, want)
		}
	}

	first := w.create(filepath.Join(dir, "sleep.yml"))
	second := w.create(filepath.Join(dir, "sleep.yml"))
	testwait.Within(t, 30*time.Second, "the first run to start", func() bool { return logHas(w, first, "started") })
	d := w.waitStatus(second, 10*time.Second, job.Queued)
	if !strings.Contains(d.StatusReason, "1/1 runs running on one-at-a-time") {
		t.Errorf("waiting run's reason = %q", d.StatusReason)
	}
	if r := w.run("compute", "delete", "-n", "one-at-a-time", "--yes"); r.code == 0 || !strings.Contains(r.stderr, "active runs") {
		t.Errorf("delete with active runs: exit %d %s", r.code, r.stderr)
	}
	w.ok("compute", "delete", "-n", "one-at-a-time", "--force", "--yes")
	for _, n := range []string{first, second} {
		if d := w.waitStatus(n, 30*time.Second, job.Canceled, job.Failed, job.Completed); d.Status != job.Canceled {
			t.Errorf("%s after delete --force: %s", n, d.Status)
		}
	}
	if r := w.run("compute", "delete", "-n", "local", "--yes"); r.code == 0 {
		t.Errorf("deleting the built-in local target succeeded")
	}
}
