package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// walkScore is a scoring script as many of Azure's examples write it: init() finds its file by
// walking AZUREML_MODEL_DIR with os.walk, which follows no symbolic link, and fails when it
// finds none.
const walkScore = `import json, os

def find(name):
    for root, dirs, files in os.walk(os.environ["AZUREML_MODEL_DIR"]):
        if name in files:
            return os.path.join(root, name)
    raise RuntimeError("no %s under %s" % (name, os.environ["AZUREML_MODEL_DIR"]))

def init():
    global W
    with open(find("weights.json")) as f:
        W = json.load(f)["w"]

def run(raw_data):
    if isinstance(raw_data, list):  # a batch deployment's mini-batch of files
        return ["%s,%d" % (os.path.basename(p), W * int(open(p).read())) for p in raw_data]
    return {"y": W * json.loads(raw_data)["x"], "deployment": "walker"}
`

// A deployment's model is real folders under AZUREML_MODEL_DIR: an online deployment and a
// batch deployment whose init() finds the model's file with os.walk start, and their answers
// use it (w = 3).
func TestModelDirWalkedByScoringScripts(t *testing.T) {
	t.Parallel()
	w, dir := endpointWS(t)
	writeFiles(t, dir, map[string]string{
		"walk/score.py":      walkScore,
		"walker.yml":         strings.Replace(deploymentYAML("walker"), "code: score\n", "code: walk\n", 1),
		"batch-endpoint.yml": "name: scorer\n",
		"batch.yml": "name: walkb\nendpoint_name: scorer\ntype: model\nmodel: azureml:m:1\n" +
			"code_configuration:\n  code: walk\n  scoring_script: score.py\ncompute: azureml:local\n" +
			"settings:\n  mini_batch_size: 5\n  output_file_name: predictions.csv\n",
		"numbers/a.txt": "4",
		"numbers/b.txt": "5",
	})
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "walker.yml"), "--all-traffic")
	if code, a, body := w.scorer("my-endpoint").score(5, ""); code != 200 || a.Y != 15 {
		t.Fatalf("scoring through a deployment that walks AZUREML_MODEL_DIR: %d %s; want y = 15", code, body)
	}

	w.ok("batch-endpoint", "create", "-f", filepath.Join(dir, "batch-endpoint.yml"))
	w.ok("batch-deployment", "create", "-f", filepath.Join(dir, "batch.yml"))
	_, got := w.batchScore("-n", "scorer", "--input", filepath.Join(dir, "numbers"))
	if rows, want := sortedRows(got), "a.txt,12 b.txt,15"; rows != want {
		t.Errorf("batch rows: %s, want %s", rows, want)
	}
}
