package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// batchScript is a batch deployment's scoring script in Azure's shape: init() loads the model
// from AZUREML_MODEL_DIR, run(mini_batch) returns one CSV row per file. The summary_only
// deployment's script writes its own file to AZUREML_BI_OUTPUT_PATH instead.
const batchScript = `import json, os

def init():
    global W
    with open(os.path.join(os.environ["AZUREML_MODEL_DIR"], "model", "weights.json")) as f:
        W = json.load(f)["w"]

def run(mini_batch):
    rows = []
    for path in mini_batch:
        with open(path) as f:
            x = int(f.read())
        rows.append("%s,%d" % (os.path.basename(path), W * x))
    if os.environ.get("SUMMARY_ONLY"):
        # A node rank and a pid: pids alone repeat across nodes (each run has a PID namespace).
        out = os.path.join(os.environ["AZUREML_BI_OUTPUT_PATH"], "summary-%s-%d.txt" % (os.environ.get("HANGAR_PARALLEL_NODE_RANK", "0"), os.getpid()))
        with open(out, "a") as f:
            f.write("\n".join(rows) + "\n")
    return rows
`

// TestBatchEndpointScoresAFolderOnACluster registers a trained model, creates a batch endpoint
// and two deployments on a cluster of two local agents, invokes the endpoint on a folder and
// reads the rows the job wrote to its output score (one file, the nodes' rows merged); a summary_only deployment writes its own
// files and no row file; list-jobs shows both jobs.
func TestBatchEndpointScoresAFolderOnACluster(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	files := map[string]string{
		"train.yml": "command: >-\n  mkdir -p ${{outputs.model}} && echo '{\"w\": 3}' > ${{outputs.model}}/weights.json\n" +
			"outputs:\n  model: {type: custom_model}\n",
		"prep.yml": "command: >-\n  for i in 1 2 3; do echo $((i * 10)) > ${{outputs.numbers}}/m$i.txt; done\n" +
			"outputs:\n  numbers: {type: uri_folder}\n",
		"cluster.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n",
		"endpoint.yml": "$schema: https://azuremlschemas.azureedge.net/latest/batchEndpoint.schema.json\n" +
			"name: scorer\ndescription: scores numbers\nauth_mode: aad_token\n",
		"code/batch_driver.py": batchScript,
		"rows.yml":             batchDeploymentYAML("rows", "append_row", ""),
		"summary.yml":          batchDeploymentYAML("summary", "summary_only", "  environment_variables: {SUMMARY_ONLY: \"1\"}\n"),
	}
	for i := range 7 { // mini-batches of 2 over 7 files: 4 mini-batches over the 2 nodes
		files[fmt.Sprintf("numbers/n%d.txt", i)] = fmt.Sprint(i + 1)
	}
	writeFiles(t, dir, files)
	train := w.create(filepath.Join(dir, "train.yml"))
	if r := w.run("job", "stream", "-n", train); r.code != 0 {
		t.Fatalf("training job: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	w.ok("model", "create", "--name", "m", "--path", "azureml://jobs/"+train+"/outputs/model")
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	w.ok("batch-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"))
	w.ok("batch-deployment", "create", "-f", filepath.Join(dir, "rows.yml"))
	w.ok("batch-deployment", "create", "-f", filepath.Join(dir, "summary.yml"))
	if r := w.ok("batch-endpoint", "show", "-n", "scorer"); !strings.Contains(r.stdout, "Default:      rows") {
		t.Errorf("the first deployment is not the default:\n%s", r.stdout)
	}

	// The 2 nodes' rows make one predictions.csv, in file order.
	name, got := w.batchScore("-n", "scorer", "--input", filepath.Join(dir, "numbers"))
	if len(got) != 1 {
		t.Errorf("got the row files %v; want predictions.csv alone", keysOf(got))
	}
	for file, text := range got {
		if want := "n0.txt,3\nn1.txt,6\nn2.txt,9\nn3.txt,12\nn4.txt,15\nn5.txt,18\nn6.txt,21\n"; filepath.Base(file) != "predictions.csv" || text != want {
			t.Errorf("%s:\n%s\nwant predictions.csv:\n%s", file, text, want)
		}
	}

	summary, got := w.batchScore("-n", "scorer", "--deployment-name", "summary",
		"--input", filepath.Join(dir, "numbers"), "--input-type", "uri_folder")
	for file := range got {
		if !strings.HasPrefix(filepath.Base(file), "summary-") {
			t.Errorf("summary_only wrote %s; want only the script's own files", file)
		}
	}
	if rows := sortedRows(got); strings.Count(rows, ".txt,") != 7 {
		t.Errorf("the script's own files hold %s, want 7 rows", rows)
	}

	// A job's output as the input: azureml://jobs/<job>/outputs/<output>.
	prep := w.create(filepath.Join(dir, "prep.yml"))
	if r := w.run("job", "stream", "-n", prep); r.code != 0 {
		t.Fatalf("prep job: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	fromJob, got := w.batchScore("-n", "scorer", "--input", "azureml://jobs/"+prep+"/outputs/numbers")
	if rows, want := sortedRows(got), "m1.txt,30 m2.txt,60 m3.txt,90"; rows != want {
		t.Errorf("rows over the job's output: %s, want %s", rows, want)
	}

	r := w.ok("batch-endpoint", "list-jobs", "-n", "scorer")
	for _, n := range []string{name, summary, fromJob} {
		if !strings.Contains(r.stdout, n) {
			t.Errorf("list-jobs does not show %s:\n%s", n, r.stdout)
		}
	}
	if strings.Contains(r.stdout, train) || strings.Contains(r.stdout, prep) {
		t.Errorf("list-jobs shows the training job:\n%s", r.stdout)
	}
	if r := w.run("batch-endpoint", "invoke", "-n", "nope", "--input", filepath.Join(dir, "numbers")); r.code == 0 ||
		!strings.Contains(r.stderr, "no batch endpoint nope") {
		t.Errorf("invoke of an unknown endpoint: exit %d, stderr %s", r.code, r.stderr)
	}
}

func batchDeploymentYAML(name, action, extra string) string {
	return "$schema: https://azuremlschemas.azureedge.net/latest/batchDeployment.schema.json\n" +
		"name: " + name + "\nendpoint_name: scorer\ntype: model\nmodel: azureml:m:1\n" +
		"code_configuration:\n  code: code\n  scoring_script: batch_driver.py\n" +
		"compute: azureml:pool\nresources:\n  instance_count: 2\n" +
		"settings:\n  max_concurrency_per_instance: 2\n  mini_batch_size: 2\n  output_action: " + action + "\n" +
		"  output_file_name: predictions.csv\n  retry_settings:\n    max_retries: 1\n    timeout: 60\n" +
		"  error_threshold: -1\n  logging_level: info\n" + extra
}

// batchScore runs batch-endpoint invoke with args, waits for the job to complete and returns
// its name and the files of its output score as `job download` gives them.
func (w *ws) batchScore(args ...string) (string, map[string]string) {
	w.t.Helper()
	r := w.ok(append(append([]string{"batch-endpoint", "invoke"}, args...), "-o", "json")...)
	var d api.RunDetail
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		w.t.Fatalf("invoke output: %v\n%s", err, r.stdout)
	}
	if got := w.waitStatus(d.ID, 3*time.Minute, job.Completed, job.Failed, job.Canceled); got.Status != job.Completed {
		w.t.Fatalf("batch job %s: status %s (%s), want Completed; log:\n%s", d.ID, got.Status, got.Error, w.logs(d.ID))
	}
	out := w.t.TempDir()
	w.ok("job", "download", "-n", d.ID, "--output-name", "score", "--download-path", out)
	return d.ID, downloaded(w.t, out)
}

// sortedRows is every line of the files, sorted, joined by spaces.
func sortedRows(files map[string]string) string {
	var rows []string
	for _, text := range files {
		rows = append(rows, strings.Split(strings.TrimSpace(text), "\n")...)
	}
	sort.Strings(rows)
	return strings.Join(rows, " ")
}

// downloaded maps each file under dir (relative path) to its text.
func downloaded(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = readFile(t, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
