package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// Deleting the serverless pool (issue 17) is refused while a job runs on one of its clusters,
// naming the job; once the job ended it deletes the pool and its serverless_<size> clusters, and
// their nodes go.
func TestServerlessPoolDeleteTakesItsClusters(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	release := filepath.Join(runsSee(t), "release")
	writeFiles(t, dir, map[string]string{
		"serverless.yml": serverlessPoolYAML,
		"job.yml":        "command: echo started; while [ ! -f " + release + " ]; do sleep 0.2; done\ncompute: serverless\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "serverless.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, 2*time.Minute, "the job to start", func() bool { return logHas(w, name, "started") })
	r := w.run("compute", "delete", "-n", "serverless", "--yes")
	if r.code == 0 || !strings.Contains(r.stderr, name) || !strings.Contains(r.stderr, "serverless_local-quarter") {
		t.Errorf("delete with a job running: exit %d, %s", r.code, r.stderr)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed || d.Serverless == nil || len(d.Serverless.Nodes) != 1 {
		t.Fatalf("job: %s (%s), serverless %+v", d.Status, d.StatusReason, d.Serverless)
	}
	node := d.Serverless.Nodes[0]
	w.ok("compute", "delete", "-n", "serverless", "--yes")
	var left []api.Compute
	if err := json.Unmarshal([]byte(w.ok("compute", "list", "-o", "json").stdout), &left); err != nil {
		t.Fatal(err)
	}
	for _, c := range left {
		machine := c.Name == "serverless" && c.ServerlessPool != nil && !c.ServerlessPool.Configured
		if c.Name != "local" && !machine { // serverless compute is this machine's again
			t.Errorf("left after the pool's delete: %s (%s, %+v)", c.Name, c.Type, c.ServerlessPool)
		}
	}
	testwait.Within(t, time.Minute, "the pool's node to go", func() bool {
		_, err := w.client().Nodes.Get(t.Context(), node)
		return api.IsNotFound(err)
	})
}
