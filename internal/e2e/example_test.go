package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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
