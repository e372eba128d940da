package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// batchInvokeFiles are a model folder, a scoring script (batchScript), seven numbers to score
// and a deployment of endpoint scorer on compute, one file per mini-batch, one node.
func batchInvokeFiles(compute string) map[string]string {
	files := map[string]string{
		"model/weights.json":   `{"w": 3}`,
		"code/batch_driver.py": batchScript,
		"deployment.yml": "$schema: https://azuremlschemas.azureedge.net/latest/batchDeployment.schema.json\n" +
			"name: rows\nendpoint_name: scorer\ntype: model\nmodel: azureml:m:1\n" +
			"code_configuration:\n  code: code\n  scoring_script: batch_driver.py\n" +
			"compute: azureml:" + compute + "\nresources:\n  instance_count: 1\n" +
			"settings:\n  mini_batch_size: 1\n  output_action: append_row\n  output_file_name: predictions.csv\n",
	}
	for i := range 7 {
		files[fmt.Sprintf("numbers/n%d.txt", i)] = fmt.Sprint(i + 1)
	}
	return files
}

// rowsOf7 are the rows batchScript writes for batchInvokeFiles' numbers, in file order.
const rowsOf7 = "n0.txt,3\nn1.txt,6\nn2.txt,9\nn3.txt,12\nn4.txt,15\nn5.txt,18\nn6.txt,21\n"

// TestBatchInvokeOverrides invokes a batch endpoint as Azure's example scripts do, changing the
// deployment for one job: --mini-batch-size and --instance-count (the job's log says how the
// input was split and over how many nodes), --set output_file_name and --output-path (the rows
// file has that name, and a later job reads it at that datastore path). The stored deployment
// is unchanged, and a bad value is refused naming its flag.
func TestBatchInvokeOverrides(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	files := batchInvokeFiles("pool")
	files["cluster.yml"] = "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n"
	files["read.yml"] = "command: cat ${{inputs.predictions}}\ninputs:\n  predictions:\n    type: uri_file\n" +
		"    path: azureml://datastores/workspaceblobstore/paths/scorer/today/today.csv\n"
	writeFiles(t, dir, files)
	w.ok("model", "create", "--name", "m", "--version", "1", "--path", filepath.Join(dir, "model"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	w.ok("batch-endpoint", "create", "--name", "scorer")
	w.ok("batch-deployment", "create", "-f", filepath.Join(dir, "deployment.yml"))

	name, got := w.batchScore("--name", "scorer", "--input", filepath.Join(dir, "numbers"), "--input-type", "uri_folder",
		"--mini-batch-size", "3", "--instance-count", "2",
		"--output-path", "azureml://datastores/workspaceblobstore/paths/scorer/today", "--set", "output_file_name=today.csv")
	for file, text := range got {
		if len(got) != 1 || filepath.Base(file) != "today.csv" || text != rowsOf7 {
			t.Errorf("the output score holds %s:\n%s\nwant today.csv alone with\n%s", file, text, rowsOf7)
		}
	}
	log := w.ok("job", "stream", "-n", name).stdout // every node's log, as az ml job stream shows them
	for _, want := range []string{"node 0 of 2: 7 files in 3 mini-batches", "node 1 of 2: 7 files in 3 mini-batches"} {
		if !strings.Contains(log, want) {
			t.Errorf("job stream lacks %q:\n%s", want, log)
		}
	}
	if d := w.show(name); d.Spec.Resources.InstanceCount != 2 {
		t.Errorf("job show: instance_count %d, want 2", d.Spec.Resources.InstanceCount)
	}

	// The rows file is where --output-path put it: a job reads it there.
	reader := w.create(filepath.Join(dir, "read.yml"))
	if d := w.waitStatus(reader, time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("the job reading the output path: %s (%s)\n%s", d.Status, d.Error, w.logs(reader))
	}
	if log := w.logs(reader); !strings.Contains(log, strings.TrimSpace(rowsOf7)) {
		t.Errorf("the job reading scorer/today/today.csv printed:\n%s\nwant the rows:\n%s", log, rowsOf7)
	}

	// The deployment as stored: the next invoke without flags runs it.
	if r := w.ok("batch-deployment", "show", "-n", "rows", "-e", "scorer", "--query",
		"[settings.mini_batch_size, settings.output_file_name, instance_count]", "-o", "tsv"); strings.Fields(r.stdout)[0] != "1" ||
		!strings.Contains(r.stdout, "predictions.csv") {
		t.Errorf("the stored deployment after the invoke: %q; want mini_batch_size 1, predictions.csv, 1 instance", r.stdout)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--mini-batch-size", "0"}, 1, "mini_batch_size (--mini-batch-size): expected an integer of at least 1, got 0"},
		{[]string{"--instance-count", "3"}, 1, "resources.instance_count: the job needs 3 nodes, compute pool has max_instances 2"},
		{[]string{"--set", "mini_batch_size=many"}, 2, `--set mini_batch_size=many: expected an integer, got "many"`},
		{[]string{"--set", "shards=2"}, 2, "--set shards=2: not a field an invoke sets (it takes mini_batch_size, compute.instance_count"},
		{[]string{"--output-path", "azureml://datastores/elsewhere/paths/x"}, 1, "output_path (--output-path): no datastore named elsewhere"},
	} {
		args := append([]string{"batch-endpoint", "invoke", "-n", "scorer", "--input", filepath.Join(dir, "numbers")}, tc.args...)
		if r := w.run(args...); r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("invoke %s: exit %d, stderr %s; want exit %d saying %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.want)
		}
	}
}

// TestBatchInvokeFromAFile invokes a model deployment with Azure's invocation file (--f, a
// prefix of --file, as the examples write it): its one input, a folder relative to the file,
// and the output score at a datastore path; the rows land in the default file name there.
func TestBatchInvokeFromAFile(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	files := batchInvokeFiles("local")
	files["inputs.yml"] = "inputs:\n  heart_dataset:\n    type: uri_folder\n    path: numbers\n" +
		"outputs:\n  score:\n    type: uri_folder\n    mode: upload\n    path: azureml://datastores/workspaceblobstore/paths/scorer/from-file\n"
	files["read.yml"] = "command: cat ${{inputs.rows}}/predictions.csv\ninputs:\n  rows:\n    type: uri_folder\n" +
		"    path: azureml://datastores/workspaceblobstore/paths/scorer/from-file\n"
	files["two.yml"] = "inputs:\n  a: {type: uri_folder, path: numbers}\n  b: {type: uri_folder, path: numbers}\n"
	writeFiles(t, dir, files)
	w.ok("model", "create", "--name", "m", "--version", "1", "--path", filepath.Join(dir, "model"))
	w.ok("batch-endpoint", "create", "--name", "scorer")
	w.ok("batch-deployment", "create", "-f", filepath.Join(dir, "deployment.yml"))

	r := w.ok("batch-endpoint", "invoke", "-n", "scorer", "--f", filepath.Join(dir, "inputs.yml"), "--query", "name", "-o", "tsv")
	name := strings.TrimSpace(r.stdout)
	if d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed {
		t.Fatalf("batch job %s: %s (%s)\n%s", name, d.Status, d.Error, w.logs(name))
	}
	if log := w.logs(name); !regexp.MustCompile(`7 files in 7 mini-batches`).MatchString(log) {
		t.Errorf("the job's log does not split 7 files one a mini-batch:\n%s", log)
	}
	reader := w.create(filepath.Join(dir, "read.yml"))
	if d := w.waitStatus(reader, time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("the job reading the file's output path: %s (%s)\n%s", d.Status, d.Error, w.logs(reader))
	}
	if rows := sortedLines(w.logs(reader), ".txt,"); rows != sortedLines(rowsOf7, ".txt,") {
		t.Errorf("predictions.csv at the file's output path holds %q, want %q", rows, sortedLines(rowsOf7, ".txt,"))
	}

	if r := w.run("batch-endpoint", "invoke", "-n", "scorer", "-f", filepath.Join(dir, "two.yml")); r.code != 1 ||
		!strings.Contains(r.stderr, "inputs: a model deployment scores one input, got 2 (a, b)") {
		t.Errorf("a file with two inputs: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := w.run("batch-endpoint", "invoke", "-n", "scorer"); r.code != 2 || !strings.Contains(r.stderr, "give --input") {
		t.Errorf("an invoke with neither --input nor --file: exit %d, stderr %s", r.code, r.stderr)
	}
}

// sortedLines are text's lines holding sub, sorted and joined by spaces.
func sortedLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
