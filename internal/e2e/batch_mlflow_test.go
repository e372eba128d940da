package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// A no-code MLflow batch deployment, as Azure's heart-classifier-mlflow deployment-simple
// example makes one: an mlflow_model registered with `model create --type mlflow_model`, a
// batch deployment with no code_configuration and no environment, invoked over a folder of
// CSVs. The job's output score holds predictions.csv as Azure writes it (row, prediction, file
// name; no header), each prediction scikit-learn's own.
func TestBatchEndpointMLflowNoCode(t *testing.T) {
	requireTool(t, "python3")
	requireSklearn(t)
	// The node's python3 is Debian's, with its scikit-learn (this machine's PATH may put another first).
	bin := t.TempDir()
	if err := os.Symlink("/usr/bin/python3", filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	// The node's package index is none: pip finds nothing (and asks no network).
	w := newWSEnv(t, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "PIP_NO_INDEX=1"})
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	out, err := exec.Command("/usr/bin/python3", "-c", makeMLflowModel, model).Output()
	if err != nil {
		t.Fatalf("make the MLflow model: %v", err)
	}
	var want struct {
		Rows        [][]float64 `json:"rows"`
		Predictions []int       `json:"predictions"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	r := want.Rows
	writeFiles(t, dir, map[string]string{
		"endpoint.yml": "$schema: https://azuremlschemas.azureedge.net/latest/batchEndpoint.schema.json\n" +
			"name: heart-batch\nauth_mode: aad_token\n",
		"deployment.yml": "$schema: https://azuremlschemas.azureedge.net/latest/batchDeployment.schema.json\n" +
			"endpoint_name: heart-batch\nname: classifier-mlflow\ntype: model\nmodel: azureml:heart:1\n" +
			"compute: azureml:local\nresources:\n  instance_count: 1\n" +
			"settings:\n  max_concurrency_per_instance: 2\n  mini_batch_size: 1\n  output_action: append_row\n" +
			"  output_file_name: predictions.csv\n  retry_settings:\n    max_retries: 1\n    timeout: 120\n" +
			"  error_threshold: -1\n  logging_level: info\n",
		// The columns in another order and an extra one in the second file: the signature orders them.
		"data/heart-0.csv": fmt.Sprintf("age,bmi,bp\n%v,%v,%v\n%v,%v,%v\n", r[0][0], r[0][1], r[0][2], r[1][0], r[1][1], r[1][2]),
		"data/heart-1.csv": fmt.Sprintf("bp,id,age,bmi\n%v,7,%v,%v\n", r[2][2], r[2][0], r[2][1]),
	})
	w.ok("model", "create", "--name", "heart", "--type", "mlflow_model", "--path", model)
	w.ok("batch-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"))
	w.ok("batch-deployment", "create", "-f", filepath.Join(dir, "deployment.yml"))

	scored, got := w.batchScore("-n", "heart-batch", "--input", filepath.Join(dir, "data"))
	p := want.Predictions
	wantRows := fmt.Sprintf("0,%d,heart-0.csv\n1,%d,heart-0.csv\n0,%d,heart-1.csv\n", p[0], p[1], p[2])
	if len(got) != 1 {
		t.Errorf("the job's output score holds %v; want predictions.csv alone", keysOf(got))
	}
	for file, text := range got {
		if filepath.Base(file) != "predictions.csv" || text != wantRows {
			t.Errorf("%s:\n%s\nwant predictions.csv:\n%s", file, text, wantRows)
		}
	}
	// The model's requirements.txt is its environment: the node's python3 has scikit-learn, so it runs there.
	logs := w.logs(scored)
	for _, s := range []string{"loader mlflow.sklearn", "the model's requirements.txt is its environment",
		"has every library they name: scikit-learn", "nothing is installed"} {
		if !strings.Contains(logs, s) {
			t.Errorf("the job's log does not say %q:\n%s", s, logs)
		}
	}

	// A model whose requirements the node's python3 lacks gets a managed environment built by
	// pip from the node's index, which has nothing here: the job fails saying so.
	needs := filepath.Join(dir, "needs")
	if err := os.CopyFS(needs, os.DirFS(model)); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, needs, map[string]string{"requirements.txt": "mlflow==2.19.0\nhangar-no-such-package==1.0\n"})
	w.ok("model", "create", "--name", "needs", "--type", "mlflow_model", "--path", needs)
	writeFiles(t, dir, map[string]string{"needs.yml": strings.Replace(strings.Replace(readFile(t, filepath.Join(dir, "deployment.yml")),
		"name: classifier-mlflow", "name: needs", 1), "azureml:heart:1", "azureml:needs:1", 1)})
	w.ok("batch-deployment", "create", "-f", filepath.Join(dir, "needs.yml"))
	var d api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("batch-endpoint", "invoke", "-n", "heart-batch", "--deployment-name", "needs",
		"--input", filepath.Join(dir, "data"), "-o", "json").stdout), &d); err != nil {
		t.Fatal(err)
	}
	if got := w.waitStatus(d.ID, 2*time.Minute, job.Completed, job.Failed, job.Canceled); got.Status != job.Failed ||
		!strings.Contains(got.Error, "environment build failed") {
		t.Errorf("a model whose library the node lacks: %s (%s); want Failed: environment build failed", got.Status, got.Error)
	}
	logs = w.logs(d.ID)
	for _, s := range []string{"lacks hangar-no-such-package==1.0, so a managed environment is built with pip from the node's package index",
		"hangar-no-such-package==1.0 numpy pandas pyyaml", "No matching distribution found for hangar-no-such-package==1.0"} {
		if !strings.Contains(logs, s) {
			t.Errorf("the failed job's log does not say %q:\n%s", s, logs)
		}
	}
	// A summary_only no-code deployment would write nothing: refused.
	bad := strings.Replace(readFile(t, filepath.Join(dir, "deployment.yml")), "append_row", "summary_only", 1)
	bad = strings.Replace(bad, "name: classifier-mlflow", "name: summary", 1)
	writeFiles(t, dir, map[string]string{"summary.yml": bad})
	if r := w.run("batch-deployment", "create", "-f", filepath.Join(dir, "summary.yml")); r.code == 0 || !strings.Contains(r.stderr, "summary_only") {
		t.Errorf("a summary_only deployment without code: exit %d, stderr %s", r.code, r.stderr)
	}
}
