package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// parallelScript is an entry script as Azure's examples write them: init() once per worker
// (it leaves a file in outputs/ named after its process), run() returns one row per file. The
// mini-batch holding fail_once.txt fails on its first attempt (a marker in the shared working
// folder remembers it); a file whose name starts with "bad" always fails.
const parallelScript = `import argparse, os

def init():
    global prefix
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix")
    args, _ = parser.parse_known_args()
    prefix = args.prefix
    with open(os.path.join("outputs", "init_%d.txt" % os.getpid()), "w") as f:
        f.write("init\n")

def run(mini_batch):
    rows = []
    for path in mini_batch:
        name = os.path.basename(path)
        if name == "fail_once.txt" and not os.path.exists("failed_once"):
            open("failed_once", "w").close()
            raise RuntimeError("first attempt of the batch with " + name)
        if name.startswith("bad"):
            raise ValueError("cannot score " + name)
        with open(path) as f:
            rows.append("%s %s %s" % (prefix, name, f.read().strip().upper()))
    return rows
`

// parallelJobFile is a parallel job over ./data split 4 files a mini-batch, on 2 workers.
func parallelJobFile(extra string) string {
	return `$schema: https://azuremlschemas.azureedge.net/latest/parallelJob.schema.json
type: parallel
compute: azureml:local
inputs:
  images: {type: uri_folder, path: ./data}
  prefix: scored
outputs:
  scores: {type: uri_folder}
input_data: ${{inputs.images}}
mini_batch_size: "4"
max_concurrency_per_instance: 2
logging_level: DEBUG
` + extra + `task:
  type: run_function
  code: ./src
  entry_script: score.py
  program_arguments: --prefix ${{inputs.prefix}}
  append_row_to: ${{outputs.scores}}
`
}

// A parallel job over a folder of 25 files: 7 mini-batches on 2 workers, one retried after a
// failure; the rows arrive in the downloaded output as a user reads them, in file order.
func TestParallelJobScoresAFolder(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	files := map[string]string{"src/score.py": parallelScript, "job.yml": parallelJobFile("")}
	var want []string
	for i := range 25 {
		name := fmt.Sprintf("f%02d.txt", i)
		if i == 9 {
			name = "fail_once.txt"
		}
		files["data/"+name] = fmt.Sprintf("v%02d\n", i)
	}
	writeFiles(t, dir, files)
	entries, err := os.ReadDir(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries { // the driver takes a folder's files in sorted order
		v := strings.TrimSpace(readFile(t, filepath.Join(dir, "data", e.Name())))
		want = append(want, "scored "+e.Name()+" "+strings.ToUpper(v))
	}
	if r := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--dry-run"); !strings.Contains(r.stdout, "HANGAR_PARALLEL_DRIVER") {
		t.Errorf("--dry-run does not show the driver's command:\n%s", r.stdout)
	}
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	log := w.logs(name)
	if d.Status != job.Completed {
		t.Fatalf("status %s (%s), want Completed; log:\n%s", d.Status, d.Error, log)
	}
	for _, line := range []string{"attempt 1 of 4 failed (RuntimeError: first attempt of the batch with fail_once.txt); retrying",
		"node 0 progress: 7/7 mini-batches done, 0 failed, 1 retried",
		"7 mini-batches: 7 succeeded, 0 failed (0 files), 1 retried; 25 rows written to parallel_run_step.txt"} {
		if !strings.Contains(log, line) {
			t.Errorf("log lacks %q:\n%s", line, log)
		}
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--all", "--download-path", out)
	base := filepath.Join(out, name)
	got := strings.Split(strings.TrimSuffix(readFile(t, filepath.Join(base, "named-outputs", "scores", "parallel_run_step.txt")), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parallel_run_step.txt:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	inits, _ := filepath.Glob(filepath.Join(base, "artifacts", "outputs", "init_*.txt"))
	if len(inits) != 2 {
		t.Errorf("init() ran %d times (%v), want once in each of the 2 workers", len(inits), inits)
	}
}

// Mini-batches that keep failing past mini_batch_error_threshold fail the job, and its reason
// says how many failed, the threshold and the last error.
func TestParallelJobFailsPastErrorThreshold(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	files := map[string]string{"src/score.py": parallelScript,
		"job.yml": parallelJobFile("mini_batch_error_threshold: 1\nretry_settings: {max_retries: 1, timeout: 30}\n")}
	for i := range 12 {
		name := fmt.Sprintf("f%02d.txt", i)
		if i >= 4 { // mini-batches 1 and 2 always fail
			name = fmt.Sprintf("bad%02d.txt", i)
		}
		files["data/"+name] = "x\n"
	}
	writeFiles(t, dir, files)
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	log := w.logs(name)
	if d.Status != job.Failed {
		t.Fatalf("status %s, want Failed; log:\n%s", d.Status, log)
	}
	want := "2 failed mini-batches exceed mini_batch_error_threshold 1; last error: mini-batch "
	if !strings.Contains(d.Error, want) || !strings.Contains(d.Error, "ValueError: cannot score bad") {
		t.Errorf("reason = %q, want it to contain %q and the ValueError", d.Error, want)
	}
	if !strings.Contains(log, "failed 2 times; giving up on its 4 files") {
		t.Errorf("log lacks the given-up mini-batch:\n%s", log)
	}
}

// On a managed cluster of 2 local agents, each node takes every other mini-batch; the job's
// output is one rows file with every node's rows in mini-batch order, as on one node.
func TestParallelJobOnTwoNodes(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	job2 := strings.Replace(parallelJobFile("resources: {instance_count: 2}\n"), "compute: azureml:local", "compute: pool", 1)
	files := map[string]string{"src/score.py": parallelScript, "job.yml": job2,
		"cluster.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n"}
	var want strings.Builder
	for i := range 10 { // mini-batches of 4: [f00-f03] on node 0, [f04-f07] on node 1, [f08 f09] on node 0
		files[fmt.Sprintf("data/f%02d.txt", i)] = fmt.Sprintf("v%02d\n", i)
		fmt.Fprintf(&want, "scored f%02d.txt V%02d\n", i, i)
	}
	writeFiles(t, dir, files)
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("status %s (%s), want Completed; log:\n%s", d.Status, d.Error, w.logs(name))
	}
	if log := w.logs(name); !strings.Contains(log, "node 0 of 2: 10 files in 3 mini-batches of up to 4, this node takes 2") {
		t.Errorf("the log does not show node 0's share:\n%s", log)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--output-name", "scores", "--download-path", out)
	got := downloaded(t, out)
	if len(got) != 1 {
		t.Fatalf("downloaded %v, want one rows file", keysOf(got))
	}
	for file, text := range got {
		if filepath.Base(file) != "parallel_run_step.txt" || text != want.String() {
			t.Errorf("%s:\n%s\nwant parallel_run_step.txt:\n%s", file, text, want.String())
		}
	}
}

// groupScript returns one row per mini-batch: its files' names, or for a table's partition the
// partition's value and the sum of its column q (rows are dicts, or a DataFrame with pandas).
const groupScript = `import os

def run(mini_batch, context):
    if context.partition_key_value:
        rows = mini_batch.to_dict("records") if hasattr(mini_batch, "to_dict") else mini_batch
        key = " ".join("%s=%s" % kv for kv in sorted(context.partition_key_value.items()))
        return ["%s: %d rows, q=%d" % (key, len(rows), sum(int(r["q"]) for r in rows))]
    return [" ".join(os.path.basename(p) for p in mini_batch)]
`

// groupJobFile is a parallel job of groupScript over the input data (of type typ) on 2 workers.
func groupJobFile(typ, extra string) string {
	return `type: parallel
compute: azureml:local
inputs:
  data: {type: ` + typ + `, path: ./data}
outputs:
  rows: {type: uri_folder}
input_data: ${{inputs.data}}
max_concurrency_per_instance: 2
` + extra + `task:
  code: ./src
  entry_script: score.py
  append_row_to: ${{outputs.rows}}
`
}

// runGroupJob runs the job of files and returns its downloaded rows file and the job's log.
func runGroupJob(t *testing.T, files map[string]string) (string, string) {
	t.Helper()
	w := newWS(t)
	dir := t.TempDir()
	files["src/score.py"] = groupScript
	writeFiles(t, dir, files)
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	log := w.logs(name)
	if d.Status != job.Completed {
		t.Fatalf("status %s (%s), want Completed; log:\n%s", d.Status, d.Error, log)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--output-name", "rows", "--download-path", out)
	got := downloaded(t, out)
	if len(got) != 1 {
		t.Fatalf("downloaded %v, want one rows file", keysOf(got))
	}
	for _, text := range got {
		return text, log
	}
	return "", log
}

// mini_batch_size as a size: a folder's files (sorted) grouped up to 1kb, a bigger file alone.
func TestParallelJobMiniBatchesBySize(t *testing.T) {
	files := map[string]string{"job.yml": groupJobFile("uri_folder", "mini_batch_size: \"1kb\"\n"),
		"data/big.bin": strings.Repeat("b", 2000)}
	for i := range 5 {
		files[fmt.Sprintf("data/f%02d.txt", i)] = strings.Repeat("x", 400)
	}
	rows, log := runGroupJob(t, files)
	if want := "big.bin\nf00.txt f01.txt\nf02.txt f03.txt\nf04.txt\n"; rows != want {
		t.Errorf("rows:\n%s\nwant:\n%s", rows, want)
	}
	if !strings.Contains(log, "6 files in 4 mini-batches of up to 1024 bytes") {
		t.Errorf("log lacks the split:\n%s", log)
	}
}

// An mltable input (Azure's MLTable file: a pattern over CSV files) with partition_keys: one
// mini-batch per store, its rows handed to run() with the partition's value.
func TestParallelJobOverAnMLTableByPartition(t *testing.T) {
	files := map[string]string{"job.yml": groupJobFile("mltable", "partition_keys: [store]\n"),
		"data/MLTable":     "paths:\n  - pattern: ./sales_*.csv\ntransformations:\n  - read_delimited:\n      delimiter: ','\n      header: all_files_same_headers\n",
		"data/sales_1.csv": "store,brand,q\n2,a,1\n1,a,2\n",
		"data/sales_2.csv": "store,brand,q\n2,b,3\n3,a,4\n1,b,5\n",
		"data/notes.txt":   "not part of the table\n",
	}
	rows, log := runGroupJob(t, files)
	if want := "store=2: 2 rows, q=4\nstore=1: 2 rows, q=7\nstore=3: 1 rows, q=4\n"; rows != want {
		t.Errorf("rows:\n%s\nwant:\n%s", rows, want)
	}
	if !strings.Contains(log, "5 rows in 3 mini-batches by partition_keys store") {
		t.Errorf("log lacks the split:\n%s", log)
	}
}

// waitScript holds node 0 on c.txt until the file $RELEASE exists; every other file is a row.
const waitScript = `import os, time

def run(mini_batch):
    for p in mini_batch:
        while os.path.basename(p) == "c.txt" and not os.path.exists(os.environ["RELEASE"]):
            time.sleep(0.05)
    return [os.path.basename(p) for p in mini_batch]
`

// kill -9 of the server once node 1 delivered its rows and node 0 has not: the restarted server
// merges both nodes' rows into the one file when node 0 delivers.
func TestParallelJobOnTwoNodesSurvivesAServerKill(t *testing.T) {
	w := newWS(t, "--log-level", "debug") // its log shows the first delivery
	dir := t.TempDir()
	release := filepath.Join(runsSee(t), "release")
	files := map[string]string{"src/score.py": waitScript,
		"job.yml": strings.Replace(groupJobFile("uri_folder", "mini_batch_size: 1\nresources: {instance_count: 2}\n"+
			"environment_variables: {RELEASE: "+release+"}\n"), "compute: azureml:local", "compute: pool", 1),
		"cluster.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n"}
	for _, f := range []string{"a", "b", "c", "d"} { // node 0: a, c; node 1: b, d
		files["data/"+f+".txt"] = f
	}
	writeFiles(t, dir, files)
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	serverLog := filepath.Join(w.home, "test-server.log")
	testwait.Within(t, 2*time.Minute, "node 1 to deliver its outputs", func() bool {
		b, _ := os.ReadFile(serverLog)
		return strings.Contains(string(b), "/artifacts status=200")
	})
	w.killServer()
	w.startServer()
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d := w.waitStatus(name, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("status %s (%s), want Completed; log:\n%s", d.Status, d.Error, w.logs(name))
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--output-name", "rows", "--download-path", out)
	got := downloaded(t, out)
	if len(got) != 1 {
		t.Fatalf("downloaded %v, want one rows file", keysOf(got))
	}
	for file, text := range got {
		if filepath.Base(file) != "parallel_run_step.txt" || text != "a.txt\nb.txt\nc.txt\nd.txt\n" {
			t.Errorf("%s:\n%s\nwant parallel_run_step.txt with a.txt to d.txt", file, text)
		}
	}
}
