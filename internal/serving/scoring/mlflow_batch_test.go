package scoring

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/parallel"
)

// The built-in MLflow batch scorer, run as a no-code batch deployment's job runs it: Hangar's
// parallel driver with the scorer as its entry script (the supervisor writes both), over a
// folder of files, one file per mini-batch.

// batchRun is one run of the parallel driver over dir's files.
type batchRun struct {
	exit   int
	rows   string // predictions.csv
	log    string // the driver's and the scorer's output
	reason string // why the job failed
}

func runMLflowBatch(t *testing.T, py, modelDir, input string, errorThreshold int) batchRun {
	t.Helper()
	tmp := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	driver := write(parallel.FileName, parallel.Driver())
	scorer := write(MLflowFileName, MLflowScorer())
	entry := write(MLflowBatchFileName, MLflowBatch())
	settings, _ := json.Marshal(map[string]any{"entry_script": entry, "mini_batch_size": 1, "max_concurrency_per_instance": 2,
		"mini_batch_error_threshold": -1, "error_threshold": errorThreshold, "max_retries": 1, "timeout": 60,
		"logging_level": "INFO", "output_file_name": "predictions.csv"})
	out := filepath.Join(tmp, "score")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	reason := filepath.Join(tmp, "reason.txt")
	cmd := exec.Command(py, driver, "--input-data", input, "--append-row-to", out, "--")
	cmd.Env = append(os.Environ(), "HANGAR_PARALLEL_SETTINGS="+string(settings), "HANGAR_PARALLEL_REASON_FILE="+reason,
		MLflowEnv+"="+scorer, "AZUREML_MODEL_DIR="+modelDir)
	log, err := cmd.CombinedOutput()
	r := batchRun{log: string(log)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "predictions.csv"))
	r.rows = string(b)
	b, _ = os.ReadFile(reason)
	r.reason = string(b)
	return r
}

// csvFolder writes files (name → text) into a fresh folder.
func csvFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Each CSV's rows are predicted with the signature enforced (columns reordered, extra ones
// dropped) and written as Azure's predictions.csv: row, prediction, file name, no header, in
// file order; a file that cannot be scored fails its mini-batch and is counted against
// error_threshold (-1: the job still completes).
func TestMLflowBatchScorer(t *testing.T) {
	py := python(t, "sklearn", "pandas", "yaml")
	model := mlflowModel(t, py, nil) // 10*x + n
	input := csvFolder(t, map[string]string{
		"a.csv":      "x,n\n1,2\n4,1\n",
		"b.csv":      "n,label,x\n3,yes,0.5\n",
		"c.avro":     "not a table\n",
		"d-bad.csv":  "x,n\none,1\n",
		"e-miss.csv": "x\n1\n",
	})
	r := runMLflowBatch(t, py, model, input, -1)
	if r.exit != 0 {
		t.Fatalf("exit %d, reason %q; log:\n%s", r.exit, r.reason, r.log)
	}
	rows, err := csv.NewReader(strings.NewReader(r.rows)).ReadAll()
	if err != nil {
		t.Fatalf("predictions.csv is not CSV: %v\n%s", err, r.rows)
	}
	want := [][]any{{"0", 12.0, "a.csv"}, {"1", 41.0, "a.csv"}, {"0", 8.0, "b.csv"}}
	if len(rows) != len(want) {
		t.Fatalf("predictions.csv:\n%s\nwant the rows %v", r.rows, want)
	}
	for i, w := range want {
		p, err := strconv.ParseFloat(rows[i][1], 64)
		if len(rows[i]) != 3 || rows[i][0] != w[0] || rows[i][2] != w[2] || err != nil || math.Abs(p-w[1].(float64)) > 1e-6 {
			t.Errorf("row %d: %q; want %v", i, rows[i], w)
		}
	}
	for _, s := range []string{
		"Error processing input file: '" + filepath.Join(input, "c.avro") + "'. File type 'avro' is not supported",
		"d-bad.csv'. Exception: Failed to enforce schema: column 'x' must hold double",
		"e-miss.csv'. Exception: Failed to enforce schema of data with schema ['x', 'n']. Error: Model is missing inputs ['n']",
		"2 succeeded, 3 failed (3 files)",
	} {
		if !strings.Contains(r.log, s) {
			t.Errorf("the job's log does not say %q:\n%s", s, r.log)
		}
	}

	// error_threshold 1: the third failed file fails the job, and its reason names the file.
	r = runMLflowBatch(t, py, model, input, 1)
	if r.exit == 0 || !strings.Contains(r.reason, "exceed error_threshold 1") || !strings.Contains(r.reason, "Error processing input file") {
		t.Errorf("with error_threshold 1: exit %d, reason %q", r.exit, r.reason)
	}
}

// Parquet is read by pandas when the environment has an engine for it; without one, the file
// fails with a message that says what is missing.
func TestMLflowBatchScorerParquet(t *testing.T) {
	py := python(t, "sklearn", "pandas", "yaml")
	model := mlflowModel(t, py, nil)
	dir := t.TempDir()
	engine := exec.Command(py, "-c", "import pandas as pd; pd.DataFrame({'x': [1.0], 'n': [2]}).to_parquet('"+filepath.Join(dir, "p.parquet")+"')").Run() == nil
	if !engine {
		if err := os.WriteFile(filepath.Join(dir, "p.parquet"), []byte("PAR1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runMLflowBatch(t, py, model, dir, -1)
	switch {
	case engine && !strings.HasPrefix(r.rows, "0,12"):
		t.Errorf("parquet: predictions %q; log:\n%s", r.rows, r.log)
	case !engine && !strings.Contains(r.log, "Reading parquet needs pyarrow or fastparquet"):
		t.Errorf("parquet without an engine: the log does not say what is missing:\n%s", r.log)
	}
}

// A model that cannot be loaded fails the job at init(), with the scorer's reason.
func TestMLflowBatchScorerNoPyfunc(t *testing.T) {
	py := python(t, "sklearn", "pandas", "yaml")
	model := mlflowModel(t, py, func(s string) string { return strings.Replace(s, "python_function:", "keras:", 1) })
	r := runMLflowBatch(t, py, model, csvFolder(t, map[string]string{"a.csv": "x,n\n1,2\n"}), -1)
	if r.exit == 0 || !strings.Contains(r.reason, "init() failed") || !strings.Contains(r.reason, "no python_function flavour") {
		t.Errorf("exit %d, reason %q", r.exit, r.reason)
	}
}
