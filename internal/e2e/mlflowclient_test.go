package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tracking/trackingtest"
)

// mlflowClient is a job's script that logs with a real MLflow client nobody here wrote (npm
// mlflow@2.0.7), configured only by the variables the job is given, as an MLflow user's script
// is: it attaches to the job's run (get, then update to RUNNING, as mlflow.start_run does with
// MLFLOW_RUN_ID set), logs a metric at steps, a param and a tag.
const mlflowClient = `const MLflow = require("mlflow");
const env = process.env;
const c = new MLflow({ endpoint: env.MLFLOW_TRACKING_URI, headers: { Authorization: "Bearer " + env.MLFLOW_TRACKING_TOKEN } });
(async () => {
  const run_id = env.MLFLOW_RUN_ID;
  const { run } = await c.Runs.get({ run_id });
  await c.Runs.update({ run_id, status: "RUNNING" });
  for (let step = 0; step < 5; step++) {
    await c.Runs.logMetric({ run_id, key: "loss", value: 1 / (step + 1), timestamp: Date.now(), step });
  }
  await c.Runs.logParameter({ run_id, key: "lr", value: "0.01" });
  await c.Runs.setTag({ run_id, key: "framework", value: "node" });
  process.stderr.write("attached to " + run.info.run_id + " in experiment " + env.MLFLOW_EXPERIMENT_NAME + "\n");
})().catch((e) => { process.stderr.write(String(e) + "\n"); process.exit(1); });
`

// A job's script logs through a real MLflow client, and the user sees it where they look:
// job show (params, tags, metrics), job metrics (the history), the run's MLflow status.
func TestMLflowClientInsideJob(t *testing.T) {
	dir := trackingtest.NodeClientDir(t)
	w := newWS(t)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"src/client.js": mlflowClient,
		"job.yml":       "command: node client.js\ncode: src\nexperiment_name: node-mlflow\n",
	})
	// The client ships with the code, as a project's node_modules does: the run user need not
	// reach the machine's copy (under root's home here).
	if out, err := exec.Command("cp", "-a", filepath.Join(dir, "node_modules"), filepath.Join(src, "src")).CombinedOutput(); err != nil {
		t.Fatalf("copy the client: %v: %s", err, out)
	}
	name := w.create(filepath.Join(src, "job.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed)
	logs := w.ok("job", "stream", name).stdout
	if d.Status != job.Completed {
		t.Fatalf("job %s: %s\n%s", name, d.Status, logs)
	}
	if !strings.Contains(logs, "attached to "+name+" in experiment node-mlflow") {
		t.Errorf("the client did not attach to the job's run:\n%s", logs)
	}

	var shown api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "show", name, "-o", "json").stdout), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Params["lr"] != "0.01" || shown.Tags["framework"] != "node" || shown.Metrics["loss"] != 0.2 {
		t.Errorf("job show: params %v, tags %v, metrics %v", shown.Params, shown.Tags, shown.Metrics)
	}
	if shown.Status != job.Completed {
		t.Errorf("the client's runs/update changed the job's state: %s", shown.Status)
	}
	hist := w.ok("job", "metrics", name, "--name", "loss").stdout
	for _, step := range []string{"0", "1", "2", "3", "4"} {
		if !strings.Contains(hist, "loss    "+step+" ") {
			t.Errorf("job metrics lacks step %s:\n%s", step, hist)
		}
	}
}
