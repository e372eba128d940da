package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
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

// On a managed cluster of 2 local agents, each node takes every other mini-batch and writes its
// own rows file; both are in the job's output.
func TestParallelJobOnTwoNodes(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	job2 := strings.Replace(parallelJobFile("resources: {instance_count: 2}\n"), "compute: azureml:local", "compute: pool", 1)
	files := map[string]string{"src/score.py": parallelScript, "job.yml": job2,
		"cluster.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n"}
	for i := range 10 { // mini-batches of 4: [f00-f03] [f04-f07] [f08 f09]
		files[fmt.Sprintf("data/f%02d.txt", i)] = fmt.Sprintf("v%02d\n", i)
	}
	writeFiles(t, dir, files)
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("status %s (%s), want Completed; log:\n%s", d.Status, d.Error, w.logs(name))
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--output-name", "scores", "--download-path", out)
	rows := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "scored f%02d.txt V%02d\n", i, i)
		}
		return b.String()
	}
	want := map[string]string{"parallel_run_step_0.txt": rows(0, 4) + rows(8, 10), "parallel_run_step_1.txt": rows(4, 8)}
	var found []string
	_ = filepath.WalkDir(out, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			found = append(found, p)
		}
		if err == nil && want[e.Name()] != "" {
			if got := readFile(t, p); got != want[e.Name()] {
				t.Errorf("%s:\n%s\nwant:\n%s", e.Name(), got, want[e.Name()])
			}
			delete(want, e.Name())
		}
		return nil
	})
	if len(want) != 0 {
		t.Errorf("missing %v among the downloaded files %v", want, found)
	}
}
