package parallel

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

// The driver's tests run the embedded driver with Debian's python3, as the supervisor does: the
// driver written to a file, the code folder as working directory, the settings and this node's
// place in the environment.

func python(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("python3 not found")
			}
			t.Skip("python3 not found")
		}
	}
	return py
}

// script is an entry script whose behaviour each file's name picks: ok* rows, bad* raises,
// once-* raises (or crashes, or hangs) on its first attempt only, remembered by a marker file.
const script = `import os, sys, time

def init():
    if os.environ.get("FAIL_INIT"):
        1 / 0
    global args
    args = sys.argv[1:]

class Frame:  # what the driver needs of a pandas DataFrame
    columns = ["file", "size"]
    def __init__(self, rows):
        self.rows = rows
    def itertuples(self, index=True, name="Pandas"):
        return iter(self.rows)

def first_time(name):
    marker = "marker-" + name
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True

def show(batch):
    if hasattr(batch, "to_dict"):
        batch = batch.to_dict("records")
    return [os.path.basename(x) if isinstance(x, str) and os.path.isabs(x) else x for x in batch]

def run(mini_batch, context=None):
    if os.environ.get("FRAMES"):
        kinds = " %s %s" % (mini_batch["x"].dtype, mini_batch["y"].dtype)
        return [" ".join(str(v) for v in row) + kinds for row in mini_batch.itertuples(index=False)]
    if os.environ.get("SHOW"):
        return [repr(show(mini_batch)) + " " + repr(context.partition_key_value)]
    names = [os.path.basename(p) for p in mini_batch]
    for n in names:
        if n.startswith("bad"):
            raise ValueError("cannot score " + n)
        if n.startswith("once-raise") and first_time(n):
            raise RuntimeError("flaky " + n)
        if n.startswith("once-crash") and first_time(n):
            os._exit(3)
        if n.startswith("once-hang") and first_time(n):
            time.sleep(60)
    if os.environ.get("FRAME"):
        return Frame([(n, len(n)) for n in names])
    return [" ".join(args) + " " + n for n in names]
`

type driverRun struct {
	code     int
	log      string
	reason   string
	rowsDir  string
	dataDir  string
	workDir  string
	settings job.ParallelRun
}

// runDriver runs the driver over files named in data (rank of nodes) and returns what it left.
func runDriver(t *testing.T, data []string, p job.ParallelRun, rank, nodes int, env ...string) driverRun {
	t.Helper()
	files := map[string]string{}
	for _, name := range data {
		files[name] = name
	}
	return runDriverOn(t, files, "", p, rank, nodes, env...)
}

// runDriverOn runs the driver over input (a path in the data folder of files, "" the folder;
// with an MLTable file, the folder is an mltable input read as the supervisor reads it). pandas
// does not import, whatever the machine has (run() gets lists), unless env has PANDAS=1.
func runDriverOn(t *testing.T, files map[string]string, input string, p job.ParallelRun, rank, nodes int, env ...string) driverRun {
	t.Helper()
	py := python(t)
	root := t.TempDir()
	r := driverRun{rowsDir: filepath.Join(root, "rows"), dataDir: filepath.Join(root, "data"), workDir: filepath.Join(root, "code"), settings: p}
	for _, d := range []string{r.rowsDir, r.dataDir, r.workDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(r.dataDir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.dataDir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	noPandas := filepath.Join(root, "nopandas")
	if err := os.MkdirAll(noPandas, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noPandas, "pandas.py"), []byte("raise ImportError('no pandas in this test')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(env, "PANDAS=1") {
		env = append(env, "PYTHONPATH="+noPandas)
	}
	if _, ok := files[MLTableFile]; ok {
		table, err := ReadMLTable(r.dataDir)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(table)
		env = append(env, "HANGAR_PARALLEL_TABLE="+string(b))
	}
	drv := filepath.Join(root, FileName)
	reason := filepath.Join(root, "reason.txt")
	for path, b := range map[string][]byte{drv: Driver(), filepath.Join(r.workDir, "score.py"): []byte(script)} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settings, _ := json.Marshal(p)
	args := []string{drv, "--input-data", filepath.Join(r.dataDir, input)}
	if p.AppendRowTo != "" {
		args = append(args, "--append-row-to", filepath.Join(r.rowsDir, p.AppendRowTo))
	}
	args = append(args, "--", "--tag", "x")
	cmd := exec.CommandContext(t.Context(), py, args...)
	cmd.Dir = r.workDir
	cmd.Env = append(os.Environ(), "HANGAR_PARALLEL_SETTINGS="+string(settings), "HANGAR_PARALLEL_REASON_FILE="+reason,
		fmt.Sprintf("HANGAR_PARALLEL_NODE_RANK=%d", rank), fmt.Sprintf("HANGAR_PARALLEL_NODE_COUNT=%d", nodes))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	r.log = string(out)
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(reason); err == nil {
		r.reason = string(b)
	}
	return r
}

func (r driverRun) rows(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.rowsDir, name))
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, r.log)
	}
	return string(b)
}

func settings(edit func(*job.ParallelRun)) job.ParallelRun {
	p := job.ParallelRun{EntryScript: "score.py", AppendRowTo: ".", MiniBatchSize: 2, MaxConcurrencyPerInstance: 2,
		MiniBatchErrorThreshold: -1, ErrorThreshold: -1, MaxRetries: 3, TimeoutSeconds: 30, LoggingLevel: "INFO"}
	if edit != nil {
		edit(&p)
	}
	return p
}

func TestDriverRowsInFileOrderAfterRetries(t *testing.T) {
	data := []string{"ok1", "once-raise", "ok3", "once-crash", "ok5", "ok6", "ok7"}
	r := runDriver(t, data, settings(nil), 0, 1)
	if r.code != 0 {
		t.Fatalf("exit %d, log:\n%s", r.code, r.log)
	}
	want := "--tag x ok1\n--tag x ok3\n--tag x ok5\n--tag x ok6\n--tag x ok7\n--tag x once-crash\n--tag x once-raise\n"
	if got := r.rows(t, "parallel_run_step.txt"); got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range []string{
		"(RuntimeError: flaky once-raise); retrying",
		"(the worker process exited with code 3); retrying",
		"node 0 progress: 4/4 mini-batches done, 0 failed, 2 retried",
		"4 mini-batches: 4 succeeded, 0 failed (0 files), 2 retried; 7 rows written to parallel_run_step.txt",
	} {
		if !strings.Contains(r.log, line) {
			t.Errorf("log lacks %q:\n%s", line, r.log)
		}
	}
}

// A mini-batch past retry_settings.timeout has its worker killed and replaced, and is retried.
func TestDriverTimeoutKillsAndRetries(t *testing.T) {
	r := runDriver(t, []string{"ok1", "once-hang"}, settings(func(p *job.ParallelRun) { p.TimeoutSeconds = 1 }), 0, 1)
	if r.code != 0 {
		t.Fatalf("exit %d, log:\n%s", r.code, r.log)
	}
	if !strings.Contains(r.log, "ran past retry_settings.timeout (1s): killing worker") ||
		!strings.Contains(r.log, "(timed out after 1s (retry_settings.timeout)); retrying") {
		t.Errorf("log lacks the timeout and the retry:\n%s", r.log)
	}
	if got := r.rows(t, "parallel_run_step.txt"); got != "--tag x ok1\n--tag x once-hang\n" {
		t.Errorf("rows = %q", got)
	}
}

func TestDriverThresholds(t *testing.T) {
	data := []string{"bad1", "bad2", "bad3", "ok4", "ok5", "ok6"}
	tests := []struct {
		name   string
		edit   func(*job.ParallelRun)
		code   int
		reason string
		log    string
	}{
		{"unlimited: the job completes with its failures counted", func(p *job.ParallelRun) { p.MaxRetries = 0 }, 0, "",
			"3 mini-batches: 1 succeeded, 2 failed (4 files), 0 retried; 2 rows written"},
		{"mini_batch_error_threshold", func(p *job.ParallelRun) { p.MaxRetries, p.MiniBatchErrorThreshold = 1, 1 }, 1,
			"2 failed mini-batches exceed mini_batch_error_threshold 1; last error: mini-batch 1 (bad3): ValueError: cannot score bad3",
			"mini-batch 1 failed 2 times; giving up on its 2 files"},
		{"error_threshold counts files", func(p *job.ParallelRun) { p.MaxRetries, p.ErrorThreshold = 0, 1 }, 1,
			"2 failed files exceed error_threshold 1; last error: mini-batch 0 (bad1): ValueError: cannot score bad1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runDriver(t, data, settings(func(p *job.ParallelRun) { p.MaxConcurrencyPerInstance = 1; tt.edit(p) }), 0, 1)
			if r.code != tt.code || r.reason != tt.reason {
				t.Errorf("exit %d reason %q\nwant exit %d reason %q\nlog:\n%s", r.code, r.reason, tt.code, tt.reason, r.log)
			}
			if !strings.Contains(r.log, tt.log) {
				t.Errorf("log lacks %q:\n%s", tt.log, r.log)
			}
		})
	}
}

func TestDriverInitFailureFailsTheJob(t *testing.T) {
	r := runDriver(t, []string{"ok1"}, settings(nil), 0, 1, "FAIL_INIT=1")
	if r.code != 1 || r.reason != "the entry script's init() failed: ZeroDivisionError: division by zero" {
		t.Errorf("exit %d reason %q\nlog:\n%s", r.code, r.reason, r.log)
	}
}

// Node 1 of 2 takes the odd mini-batches and writes its own row file, with the index the server
// merges the nodes' files by: each mini-batch's index and byte count.
func TestDriverNodeTakesItsShare(t *testing.T) {
	data := []string{"ok0", "ok1", "ok2", "ok3", "ok4", "ok5", "ok6", "ok7", "ok8"}
	r := runDriver(t, data, settings(nil), 1, 2)
	if r.code != 0 {
		t.Fatalf("exit %d, log:\n%s", r.code, r.log)
	}
	if got := r.rows(t, "parallel_run_step_1.txt"); got != "--tag x ok2\n--tag x ok3\n--tag x ok6\n--tag x ok7\n" {
		t.Errorf("rows = %q", got)
	}
	if got := r.rows(t, "parallel_run_step_1.txt.hangar-index.json"); got != `{"mini_batches": [[1, 24], [3, 24]]}` {
		t.Errorf("index = %s", got)
	}
	if !strings.Contains(r.log, "node 1 of 2: 9 files in 5 mini-batches of up to 2, this node takes 2") {
		t.Errorf("log lacks the node's share:\n%s", r.log)
	}
}

func TestDriverOutputs(t *testing.T) {
	t.Run("a uri_file output gets the rows; DataFrame rows are space-separated", func(t *testing.T) {
		r := runDriver(t, []string{"ok1", "ok22"}, settings(func(p *job.ParallelRun) { p.AppendRowTo = "scores.csv" }), 0, 1, "FRAME=1")
		if got := r.rows(t, "scores.csv"); got != "ok1 3\nok22 4\n" {
			t.Errorf("rows = %q, log:\n%s", got, r.log)
		}
	})
	t.Run("summary_only writes no rows", func(t *testing.T) {
		r := runDriver(t, []string{"ok1"}, settings(func(p *job.ParallelRun) { p.AppendRowTo = "" }), 0, 1)
		entries, _ := os.ReadDir(r.rowsDir)
		if r.code != 0 || len(entries) != 0 {
			t.Errorf("exit %d, files %v, log:\n%s", r.code, entries, r.log)
		}
	})
	t.Run("an empty folder completes with an empty row file", func(t *testing.T) {
		r := runDriver(t, nil, settings(nil), 0, 1)
		entries, _ := os.ReadDir(r.rowsDir)
		if got := r.rows(t, "parallel_run_step.txt"); r.code != 0 || got != "" || len(entries) != 1 {
			t.Errorf("exit %d rows %q files %v (want the row file only: one node has no index), log:\n%s", r.code, got, entries, r.log)
		}
	})
}

func TestDriverMiniBatchesBySize(t *testing.T) {
	bytes := func(n int64) job.ParallelRun {
		return settings(func(p *job.ParallelRun) { p.MiniBatchSize, p.MiniBatchBytes, p.MaxConcurrencyPerInstance = 0, n, 1 })
	}
	tests := []struct {
		name  string
		files map[string]string
		input string
		p     job.ParallelRun
		want  string
		log   string
	}{
		{"a folder's files in sorted order, up to the size; a bigger file alone",
			map[string]string{"a": "12", "b": "34", "c": "56", "d": "12345678", "e": "1"}, "", bytes(6),
			"['a', 'b', 'c'] {}\n['d'] {}\n['e'] {}\n", "5 files in 3 mini-batches of up to 6 bytes"},
		{"a file's lines, up to the size",
			map[string]string{"data.txt": "l1\nl2\n\nl3\nlong-line-4\nl5"}, "data.txt", bytes(6),
			"['l1', 'l2'] {}\n['l3'] {}\n['long-line-4'] {}\n['l5'] {}\n", "5 lines in 4 mini-batches of up to 6 bytes"},
		{"an mltable's rows across its files, by size",
			map[string]string{"MLTable": "paths:\n  - pattern: ./*.csv\ntransformations:\n  - read_delimited: {delimiter: ',', header: all_files_same_headers}\n",
				"a.csv": "x,y\n1,2\n3,4\n", "b.csv": "x,y\n5,6\n"}, "", bytes(8),
			"[{'x': '1', 'y': '2'}, {'x': '3', 'y': '4'}] {}\n[{'x': '5', 'y': '6'}] {}\n", "3 rows in 2 mini-batches of up to 8 bytes"},
		{"an mltable's rows by count, no header, empty values None",
			map[string]string{"MLTable": "paths:\n  - file: ./a.csv\ntransformations:\n  - read_delimited: {delimiter: ';', header: no_header}\n",
				"a.csv": "1;2\n3;\n5;6\n"}, "", settings(func(p *job.ParallelRun) { p.MiniBatchSize = 2 }),
			"[{'Column1': '1', 'Column2': '2'}, {'Column1': '3', 'Column2': None}] {}\n[{'Column1': '5', 'Column2': '6'}] {}\n", "3 rows in 2 mini-batches of up to 2 rows"},
		{"partition_keys: one mini-batch per value, in the order of first appearance",
			map[string]string{"MLTable": "paths:\n  - folder: ./sales\ntransformations:\n  - read_json_lines: {encoding: utf8}\n",
				"sales": ""}, "", settings(func(p *job.ParallelRun) { p.PartitionKeys = []string{"store", "brand"} }),
			"[{'store': 2, 'brand': 'a', 'q': 1}, {'store': 2, 'brand': 'a', 'q': 3}] {'store': 2, 'brand': 'a'}\n" +
				"[{'store': 1, 'brand': 'a', 'q': 2}] {'store': 1, 'brand': 'a'}\n" +
				"[{'store': 2, 'brand': 'b', 'q': 4}] {'store': 2, 'brand': 'b'}\n",
			"4 rows in 3 mini-batches by partition_keys store, brand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := tt.files
			if _, ok := files["sales"]; ok { // a folder of JSON-lines files
				delete(files, "sales")
				files = map[string]string{"MLTable": files["MLTable"],
					"sales/sales_1.jsonl": `{"store": 2, "brand": "a", "q": 1}` + "\n" + `{"store": 1, "brand": "a", "q": 2}` + "\n",
					"sales/sales_2.jsonl": `{"store": 2, "brand": "a", "q": 3}` + "\n" + `{"store": 2, "brand": "b", "q": 4}` + "\n"}
			}
			r := runDriverOn(t, files, tt.input, tt.p, 0, 1, "SHOW=1")
			if r.code != 0 {
				t.Fatalf("exit %d, log:\n%s", r.code, r.log)
			}
			if got := r.rows(t, "parallel_run_step.txt"); got != tt.want {
				t.Errorf("rows:\n%s\nwant:\n%s", got, tt.want)
			}
			if !strings.Contains(r.log, tt.log) {
				t.Errorf("log lacks %q:\n%s", tt.log, r.log)
			}
		})
	}
}

// With pandas, an mltable's rows reach run() as a DataFrame, a CSV's numbers as numbers; its
// rows come back one line each, values joined by spaces.
func TestDriverTablesAsDataFrames(t *testing.T) {
	if err := exec.Command(python(t), "-c", "import pandas").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pandas does not import in python3: scripts/setup/python.sh installs python3-pandas")
		}
		t.Skip("pandas does not import in python3")
	}
	files := map[string]string{"MLTable": "paths:\n  - file: a.csv\n", "a.csv": "x,y,name\n1,2.5,a\n3,4,b\n2,1,a\n"}
	p := settings(func(p *job.ParallelRun) { p.PartitionKeys = []string{"name"}; p.MaxConcurrencyPerInstance = 1 })
	r := runDriverOn(t, files, "", p, 0, 1, "PANDAS=1", "FRAMES=1")
	if r.code != 0 {
		t.Fatalf("exit %d, log:\n%s", r.code, r.log)
	}
	if got, want := r.rows(t, "parallel_run_step.txt"), "1 2.5 a int64 float64\n2 1.0 a int64 float64\n3 4 b int64 int64\n"; got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
}
