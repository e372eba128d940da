package server

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tracking/trackingtest"
)

// A real MLflow client that nobody here wrote (npm mlflow@2.0.7) logs to Hangar: an experiment,
// a run with metrics at steps, params, tags and a batch; it reads the history back and
// searches. The answers it got, job show and the store agree.
func TestMLflowNodeClient(t *testing.T) {
	dir := trackingtest.NodeClientDir(t)
	ts := newTestServer(t)
	jobID := ts.createJob(t, "scripted").ID
	out := filepath.Join(t.TempDir(), "out.json")
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join("testdata", "mlflow", "client.js"))
	cmd.Env = append(os.Environ(), "MLFLOW_JS_DIR="+dir, "HANGAR_URL="+ts.url, "HANGAR_TOKEN="+adminToken,
		"JOB_ID="+jobID, "JOB_TOKEN="+ts.ctrl.RunToken(jobID), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node client: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Experiments []string         `json:"experiments"`
		RunID       string           `json:"run_id"`
		History     []map[string]any `json:"history"`
		Search      []string         `json:"search"`
		Run         map[string]any   `json:"run"`
		Other       string           `json:"other"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(got.Experiments, []string{"node-client", "Default"}) {
		t.Errorf("experiments/list = %v", got.Experiments)
	}
	if len(got.History) != 5 || got.History[4]["value"] != 0.2 || got.History[4]["step"] != 4.0 || got.History[0]["timestamp"] != 1700000001000.0 {
		t.Errorf("history = %v", got.History)
	}
	if !cmp.Equal(got.Search, []string{got.RunID}) {
		t.Errorf("search = %v, want [%s]", got.Search, got.RunID)
	}
	if at(got.Run, "info.status") != "FINISHED" || at(got.Run, "info.run_name") != "node-run" || at(got.Run, "info.end_time") != 1700000009000.0 {
		t.Errorf("run = %v", got.Run)
	}
	if !strings.Contains(got.Other, "403") || !strings.Contains(got.Other, "PERMISSION_DENIED") {
		t.Errorf("a job's token logging to another run: %q, want a 403", got.Other)
	}

	d, err := ts.admin.Jobs.Get(t.Context(), got.RunID)
	if err != nil {
		t.Fatal(err)
	}
	wantParams := map[string]string{"lr": "0.01", "epochs": "5", "batch": "32"}
	if d.DisplayName != "node-run" || d.Description != "from node" || d.ExperimentName != "node-client" ||
		d.Status != job.Completed || !cmp.Equal(d.Params, wantParams) || d.Tags["team"] != "vision" ||
		d.Metrics["loss"] != 0.2 || d.Metrics["acc"] != 0.75 {
		t.Errorf("GET /api/jobs/%s = %+v", got.RunID, d)
	}
	ms, err := ts.store.Runs.Metrics(t.Context(), got.RunID)
	if err != nil || len(ms) != 6 {
		t.Errorf("stored history = %+v, %v; want 5 losses and 1 acc", ms, err)
	}
	jd, err := ts.admin.Jobs.Get(t.Context(), jobID)
	if err != nil || jd.Metrics["val_loss"] != 0.25 || jd.Params["seed"] != "42" || jd.Status != job.Queued {
		t.Errorf("the job's run = %+v, %v", jd, err)
	}
}
