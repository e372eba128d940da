package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
)

// modelJSON runs a model command with -o json and decodes its answer.
func (w *ws) modelJSON(out any, args ...string) {
	w.t.Helper()
	r := w.ok(append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(r.stdout), out); err != nil {
		w.t.Fatalf("hangar %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
}

// Models end to end: a training job's output registered without copying, a local folder as the
// next version, @latest, show, download compared byte for byte, a conflict, archive and restore,
// jobs that take a model as input, and the registry after a server restart.
func TestModels(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	weights := "\x00\x01binary weights\xff\n"
	writeFiles(t, dir, map[string]string{
		"train.yml": `command: >-
  mkdir -p ${{outputs.model}}/sub outputs/model &&
  printf '\000\001binary weights\377\n' > ${{outputs.model}}/sub/w.bin &&
  echo 'flavors: {}' > ${{outputs.model}}/MLmodel &&
  echo from-artifacts > outputs/model/a.txt
outputs:
  model: {type: mlflow_model}
`,
		"local/config.json":   `{"layers": 3}`,
		"local/nested/b.bin":  "second version",
		"model.yml":           "$schema: https://azuremlschemas.azureedge.net/latest/model.schema.json\nname: mnist\npath: local\ndescription: from a folder\ntags: {team: vision}\n",
		"use.yml":             "command: cat ${{inputs.m}}/nested/b.bin; echo; ls ${{inputs.m}}\ninputs:\n  m: {type: custom_model, path: azureml:mnist:2}\n",
		"uselatest.yml":       "command: ls -R ${{inputs.m}}\ninputs:\n  m: {type: mlflow_model, path: azureml:mnist@latest}\n",
		"usemissing.yml":      "command: ls ${{inputs.m}}\ninputs:\n  m: {type: custom_model, path: azureml:nope:1}\n",
		"outsidefile/one.pkl": "a single file",
	})
	train := w.create(filepath.Join(dir, "train.yml"))
	if r := w.run("job", "stream", "-n", train); r.code != 0 {
		t.Fatalf("training job: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// From the job's named output: the output's files, as the job wrote them.
	var v1 model.Version
	w.modelJSON(&v1, "model", "create", "--name", "mnist", "--type", "mlflow_model", "--path", "azureml://jobs/"+train+"/outputs/model")
	if v1.Version != "1" || v1.Type != model.MLflowModel || v1.Files != 2 || v1.Source != "azureml://jobs/"+train+"/outputs/model" {
		t.Errorf("model from a job output = %+v", v1)
	}
	out := t.TempDir()
	w.ok("model", "download", "--name", "mnist", "--version", "1", "--download-path", out)
	if got := readFile(t, filepath.Join(out, "mnist", "sub", "w.bin")); got != weights {
		t.Errorf("downloaded sub/w.bin = %q, want %q", got, weights)
	}

	// From a local folder (a model file, Azure's shape): the next version, and @latest.
	r := w.ok("model", "create", "-f", filepath.Join(dir, "model.yml"))
	if !strings.Contains(r.stdout, "Created model mnist version 2: 2 files") || !strings.Contains(r.stdout, "azureml:mnist:2") {
		t.Errorf("model create said:\n%s", r.stdout)
	}
	var latest model.Version
	w.modelJSON(&latest, "model", "show", "mnist@latest")
	if latest.Version != "2" || latest.Source != "local" || latest.Description != "from a folder" || latest.Tags["team"] != "vision" {
		t.Errorf("mnist@latest = %+v", latest)
	}
	out2 := t.TempDir()
	w.ok("model", "download", "mnist:2", "--download-path", out2)
	for p, want := range map[string]string{"config.json": `{"layers": 3}`, "nested/b.bin": "second version"} {
		if got := readFile(t, filepath.Join(out2, "mnist", p)); got != want {
			t.Errorf("downloaded %s = %q, want %q", p, got, want)
		}
	}
	// A path inside what the job wrote to ./outputs; and a single local file.
	w.ok("model", "create", "-n", "arts", "-p", "azureml://jobs/"+train+"/outputs/artifacts/paths/outputs/model/")
	w.ok("model", "create", "-n", "single", "-p", filepath.Join(dir, "outsidefile", "one.pkl"))
	out3 := t.TempDir()
	w.ok("model", "download", "-n", "arts", "-p", out3)
	w.ok("model", "download", "-n", "single", "-p", out3)
	if got := readFile(t, filepath.Join(out3, "arts", "a.txt")); got != "from-artifacts\n" {
		t.Errorf("arts a.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(out3, "single", "one.pkl")); got != "a single file" {
		t.Errorf("single one.pkl = %q", got)
	}

	// A version that exists is a conflict, said as such.
	if r := w.run("model", "create", "-n", "mnist", "-v", "2", "-p", filepath.Join(dir, "local")); r.code != 1 || !strings.Contains(r.stderr, "model mnist version 2 already exists") {
		t.Errorf("re-creating mnist:2: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := w.run("model", "create", "-n", "mnist", "-v", "beta/1", "-p", filepath.Join(dir, "local")); r.code != 2 || !strings.Contains(r.stderr, "expected letters, digits") {
		t.Errorf("version beta/1: exit %d, stderr %q", r.code, r.stderr)
	}

	// Archive: gone from list and @latest, still usable by its number.
	w.ok("model", "archive", "--name", "mnist", "--version", "2")
	w.modelJSON(&latest, "model", "show", "--name", "mnist", "--label", "latest")
	if latest.Version != "1" {
		t.Errorf("@latest after archiving 2 = %s, want 1", latest.Version)
	}
	var list []model.Version
	w.modelJSON(&list, "model", "list")
	if got := versions(list); got != "arts:1 mnist:1 single:1" {
		t.Errorf("model list = %s", got)
	}
	w.modelJSON(&list, "model", "list", "--name", "mnist", "--include-archived")
	if got := versions(list); got != "mnist:2 mnist:1" || !list[0].Archived {
		t.Errorf("model list --name mnist --include-archived = %s (%+v)", got, list)
	}
	use := w.create(filepath.Join(dir, "use.yml"))
	if d := w.waitStatus(use, time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("job using mnist:2 ended %s: %s", d.Status, w.logs(use))
	}
	if got := w.logs(use); !strings.Contains(got, "second version") || !strings.Contains(got, "config.json") {
		t.Errorf("job using mnist:2 saw:\n%s", got)
	}
	useLatest := w.create(filepath.Join(dir, "uselatest.yml"))
	if d := w.waitStatus(useLatest, time.Minute, job.Completed, job.Failed); d.Status != job.Completed || !strings.Contains(w.logs(useLatest), "w.bin") {
		t.Errorf("job using mnist@latest (1): %s\n%s", d.Status, w.logs(useLatest))
	}
	if r := w.run("job", "create", "-f", filepath.Join(dir, "usemissing.yml")); r.code == 0 || !strings.Contains(r.stderr, "no model nope:1") {
		t.Errorf("a job naming a missing model: exit %d, stderr %q", r.code, r.stderr)
	}

	// The registry is the workspace's: it outlives the server.
	w.killServer()
	w.startServer()
	w.ok("model", "restore", "mnist", "--version", "2")
	w.modelJSON(&latest, "model", "show", "mnist")
	if latest.Version != "2" || latest.Archived {
		t.Errorf("after a restart and restore, mnist = %+v", latest)
	}
	if _, err := os.Stat(filepath.Join(out, "mnist", "MLmodel")); err != nil {
		t.Errorf("MLmodel was not downloaded: %v", err)
	}
}

func versions(vs []model.Version) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name+":"+v.Version)
	}
	return strings.Join(out, " ")
}
