package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// requireTool fails (in CI) or skips (elsewhere) when a tool the test needs is missing.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI but not found: run scripts/setup/deps.sh", name)
		}
		t.Skipf("%s not found", name)
	}
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// The README's sample training job: real Python training, metrics per epoch, a model in outputs.
func TestIrisExample(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	r := w.ok("job", "create", "-f", filepath.Join(repoRoot(t), "examples", "iris", "job.yml"), "--name", "iris-e2e", "--stream")
	if !strings.Contains(r.stdout, "epoch  30") || !strings.Contains(r.stdout, "final test accuracy") {
		t.Fatalf("training log:\n%s", r.stdout)
	}
	d := w.show("iris-e2e")
	if d.Status != job.Completed || d.DisplayName != "iris-softmax" || d.ExperimentName != "iris" {
		t.Fatalf("status %s display %q experiment %q", d.Status, d.DisplayName, d.ExperimentName)
	}
	if acc := d.Metrics["test_accuracy"]; acc < 0.8 {
		t.Errorf("test_accuracy = %v, want >= 0.8 (metrics %v)", acc, d.Metrics)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", "iris-e2e", "--all", "--download-path", out)
	var model struct {
		Classes []string    `json:"classes"`
		Weights [][]float64 `json:"weights"`
	}
	b := readFile(t, filepath.Join(out, "iris-e2e", "named-outputs", "model", "model.json"))
	if err := json.Unmarshal([]byte(b), &model); err != nil || len(model.Classes) != 3 || len(model.Weights) != 3 {
		t.Errorf("model.json = %.200s (%v)", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, "iris-e2e", "artifacts", "outputs", "model.json")); err != nil {
		t.Errorf("artifacts/outputs/model.json: %v", err)
	}
}

// The README's sweep: six trials of the iris training on the local target, the best kept; the
// user reads it in job show and downloads the best trial's model.
func TestIrisSweepExample(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	name := w.create(filepath.Join(repoRoot(t), "examples", "iris", "sweep.yml"))
	d := w.waitStatus(name, 8*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed || d.Sweep == nil {
		t.Fatalf("sweep %s is %s (%s), sweep detail %v", name, d.Status, d.StatusReason, d.Sweep)
	}
	if len(d.Sweep.Trials) != 6 || d.Sweep.BestChildRunID == "" || d.Sweep.BestMetric == nil || *d.Sweep.BestMetric < 0.8 {
		t.Fatalf("sweep detail: %d trials, best %q metric %v; want 6 trials and a best test_accuracy >= 0.8",
			len(d.Sweep.Trials), d.Sweep.BestChildRunID, d.Sweep.BestMetric)
	}
	out := w.ok("job", "show", "-n", name).stdout
	for _, want := range []string{"Best trial:", d.Sweep.BestChildRunID, "Best params:", "epochs=", "lr="} {
		if !strings.Contains(out, want) {
			t.Errorf("job show lacks %q:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	best := d.Sweep.BestChildRunID
	w.ok("job", "download", "-n", best, "--output-name", "model", "--download-path", dir)
	var model struct {
		TestAccuracy float64 `json:"test_accuracy"`
	}
	b := readFile(t, filepath.Join(dir, best, "named-outputs", "model", "model.json"))
	if err := json.Unmarshal([]byte(b), &model); err != nil || model.TestAccuracy != *d.Sweep.BestMetric {
		t.Errorf("the best trial's model.json says test_accuracy %v (%v), the sweep %v", model.TestAccuracy, err, *d.Sweep.BestMetric)
	}
}

// The README's pipeline: train, then evaluate the model train wrote; the user downloads the
// pipeline's report, and a second submission reuses both steps from the cache.
func TestIrisPipelineExample(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	file := filepath.Join(repoRoot(t), "examples", "iris", "pipeline.yml")
	name := w.create(file)
	d := w.waitStatus(name, 5*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("pipeline %s is %s (%s)", name, d.Status, d.StatusReason)
	}
	dir := t.TempDir()
	w.ok("job", "download", "-n", name, "--output-name", "report", "--download-path", dir)
	var report struct {
		Samples  int     `json:"samples"`
		Accuracy float64 `json:"accuracy"`
	}
	b := readFile(t, filepath.Join(dir, name, "named-outputs", "report", "report.json"))
	if err := json.Unmarshal([]byte(b), &report); err != nil || report.Samples != 150 || report.Accuracy < 0.8 {
		t.Errorf("report.json = %s (%v); want 150 samples evaluated, accuracy >= 0.8", b, err)
	}
	again := w.create(file)
	if d := w.waitStatus(again, 2*time.Minute, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed {
		t.Fatalf("rerun %s is %s (%s)", again, d.Status, d.StatusReason)
	}
	out := w.ok("job", "show", "-n", again).stdout
	for _, want := range []string{"reused from " + name + "_train", "reused from " + name + "_evaluate"} {
		if !strings.Contains(out, want) {
			t.Errorf("job show of the rerun lacks %q:\n%s", want, out)
		}
	}
}
