package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// An Azure ML hello-world job runs unchanged; the image is recorded as a warning.
func TestHelloWorldAzureJob(t *testing.T) {
	w := newWSEnv(t, []string{"HANGAR_CONTAINER_RUNTIME=none"}) // a node without a container runtime
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"hello.yml": `$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
command: echo "hello world"
environment:
  image: library/python:latest
compute: azureml:local
`})
	r := w.ok("job", "create", "-f", filepath.Join(dir, "hello.yml"), "--stream")
	if strings.TrimSpace(r.stdout) != "hello world" {
		t.Errorf("streamed log = %q, want hello world", r.stdout)
	}
	runs := w.ok("job", "list", "-o", "json")
	var list []api.RunDetail
	if err := json.Unmarshal([]byte(runs.stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("job list = %v, %v", runs.stdout, err)
	}
	// On a workspace without users the workspace token submits as admin: --mine finds the job.
	var mine []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "--mine", "-o", "json").stdout), &mine); err != nil || len(mine) != 1 || mine[0].ID != list[0].ID {
		t.Errorf("job list --mine = %+v, %v; want the job", mine, err)
	}
	d := w.show(list[0].ID)
	if d.Status != job.Completed || d.Compute != "local" || d.ExitCode == nil || *d.ExitCode != 0 {
		t.Errorf("status %s compute %s exit %v, want Completed on local with exit 0", d.Status, d.Compute, d.ExitCode)
	}
	if len(d.Warnings) == 0 || !strings.Contains(d.Warnings[0], "library/python:latest") {
		t.Errorf("warnings = %q, want one about the image", d.Warnings)
	}
	if d.StartedAt == nil || d.EndedAt == nil || d.CreatedAt.IsZero() {
		t.Errorf("times missing: created %v started %v ended %v", d.CreatedAt, d.StartedAt, d.EndedAt)
	}
	var states []job.State
	for _, e := range d.Events {
		states = append(states, e.To)
	}
	want := []job.State{job.NotStarted, job.Queued, job.Preparing, job.Starting, job.Running, job.Finalizing, job.Completed}
	if strings.Join(toStrings(states), ",") != strings.Join(toStrings(want), ",") {
		t.Errorf("events = %v, want %v", states, want)
	}
}

func toStrings(s []job.State) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}

// Inputs (literal, file, folder), outputs, environment variables, --set and download, together.
func TestInputsOutputsEnvAndDownload(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"src/run.sh": `set -eu
echo "lr=$1 epochs=$2 greeting=$GREETING count=$COUNT"
echo "file: $(cat "$3")"
echo "folder: $(ls "$4" | tr '\n' ' ')"
echo "$HANGAR_RUN_ID" > outputs/run_id.txt
mkdir -p "$5/sub" && echo weights > "$5/sub/w.bin"
echo scored > "$6"
echo note > logs/note.txt
`,
		"data/one.txt":     "from a file",
		"data/set/a.txt":   "a",
		"data/set/b/c.txt": "c",
		"job.yml": `command: bash run.sh ${{inputs.lr}} ${{inputs.epochs}} ${{inputs.file}} ${{inputs.folder}} ${{outputs.model}} ${{outputs.score}}
code: src
inputs:
  lr: 0.01
  epochs: 3
  file: {type: uri_file, path: data/one.txt, mode: download}
  folder: {type: uri_folder, path: ./data/set}
outputs:
  model: {type: uri_folder}
  score: {type: uri_file}
environment_variables:
  GREETING: "hi there"
  COUNT: 7
`,
	})
	name := w.create(filepath.Join(dir, "job.yml"), "--set", "inputs.epochs=9", "--set", "environment_variables.GREETING=hello")
	r := w.run("job", "stream", "-n", name)
	if r.code != 0 {
		t.Fatalf("stream exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"lr=0.01 epochs=9 greeting=hello count=7", "file: from a file", "folder: a.txt b "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("log lacks %q:\n%s", want, r.stdout)
		}
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--all", "--download-path", out)
	base := filepath.Join(out, name)
	if got := strings.TrimSpace(readFile(t, filepath.Join(base, "artifacts", "outputs", "run_id.txt"))); got != name {
		t.Errorf("outputs/run_id.txt = %q, want %q", got, name)
	}
	if got := readFile(t, filepath.Join(base, "artifacts", "user_logs", "std_log.txt")); !strings.Contains(got, "file: from a file") {
		t.Errorf("std_log.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(base, "artifacts", "logs", "note.txt")); got != "note\n" {
		t.Errorf("logs/note.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(base, "named-outputs", "model", "sub", "w.bin")); got != "weights\n" {
		t.Errorf("named output model = %q", got)
	}
	if got := readFile(t, filepath.Join(base, "named-outputs", "score", "score")); got != "scored\n" {
		t.Errorf("named output score = %q", got)
	}
}

// A failing command ends Failed with its exit code and log tail; stream exits 3.
func TestFailedJob(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": "command: echo about to fail; echo oops >&2; exit 3\n"})
	r := w.run("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	if r.code != 3 {
		t.Fatalf("create --stream exit = %d, want 3\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "oops") {
		t.Errorf("stderr of the command missing from the log: %q", r.stdout)
	}
	var list []api.RunDetail
	_ = json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &list)
	d := w.show(list[0].ID)
	if d.Status != job.Failed || d.ExitCode == nil || *d.ExitCode != 3 {
		t.Fatalf("status %s exit %v, want Failed with 3", d.Status, d.ExitCode)
	}
	if !strings.Contains(d.Error, "exited with code 3") || len(d.LogTail) != 2 || d.LogTail[1] != "oops" {
		t.Errorf("error %q, log tail %q", d.Error, d.LogTail)
	}
	if r := w.run("job", "stream", "-n", d.ID); r.code != 3 {
		t.Errorf("job stream of a failed job exit = %d, want 3", r.code)
	}
}

// JSON lines in $HANGAR_METRICS_FILE become metrics; job show has the last values.
func TestMetricsFile(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": `command: >-
  for i in 1 2 3; do echo "{\"name\": \"loss\", \"value\": 0.$((4-i)), \"step\": $i}" >> $HANGAR_METRICS_FILE; done;
  echo '{"name": "acc", "value": 0.9}' >> $HANGAR_METRICS_FILE;
  echo 'not json' >> $HANGAR_METRICS_FILE;
  printf '{"name": "last", "value": 5}' >> $HANGAR_METRICS_FILE
`})
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed)
	if d.Status != job.Completed {
		t.Fatalf("status %s: %s", d.Status, d.Error)
	}
	want := map[string]float64{"loss": 0.1, "acc": 0.9, "last": 5}
	for k, v := range want {
		if d.Metrics[k] != v {
			t.Errorf("metric %s = %v, want %v (all: %v)", k, d.Metrics[k], v, d.Metrics)
		}
	}
	found := false
	for _, warn := range d.Warnings {
		found = found || strings.Contains(warn, "metrics file line 5")
	}
	if !found {
		t.Errorf("no warning about the bad metrics line: %q", d.Warnings)
	}
}

// Relative paths resolve against the YAML file's folder, wherever the CLI runs.
func TestRelativePathsFromYAMLFolder(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"proj/src/hello.txt": "snapshot content",
		"proj/job.yml":       "command: cat hello.txt\ncode: src\n",
	})
	r := w.runIn(t.TempDir(), "job", "create", "-f", filepath.Join(dir, "proj", "job.yml"), "--stream")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "snapshot content" {
		t.Fatalf("exit %d, log %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	_ = os.Remove
}
