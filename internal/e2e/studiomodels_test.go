package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// studioModelTrain writes the model a deployment's scoring script loads (endpoint_test.go's
// scoreScript), after reading its input data.
const studioModelTrain = `import json, os, sys
rows = open(sys.argv[1]).read().splitlines()
os.makedirs(sys.argv[2], exist_ok=True)
with open(os.path.join(sys.argv[2], "weights.json"), "w") as f:
    json.dump({"w": len(rows)}, f)
`

// The studio's Models page, as a user reads it in the browser: a model registered from a job's
// output shows its description and tags set through MLflow, its versions with MLflow's stage
// and alias, their tags and descriptions, all as text (markup in them runs nothing), the lineage (the run linked, its code snapshot, its
// registered environment as name:version, its input data) and the online deployment serving
// the version, with the ref it names and the version that resolved to; the run's page lists the
// version registered from it. `model show` says the same in JSON.
func TestStudioModelsPage(t *testing.T) {
	ctx := browser(t)
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"env.yml":       "name: lineage-python\ninterpreter_path: /bin/python3\n",
		"src/train.py":  studioModelTrain,
		"data/rows.csv": "1\n2\n3\n",
		"train.yml": "command: python train.py ${{inputs.rows}} ${{outputs.model}}\ncode: src\n" +
			"environment: azureml:lineage-python:1\n" +
			"inputs:\n  rows: {type: uri_file, path: data/rows.csv}\n  lr: 0.1\n" +
			"outputs:\n  model: {type: custom_model}\n",
		"endpoint.yml":   "name: my-endpoint\nauth_mode: key\n",
		"score/score.py": scoreScript,
		"blue.yml":       deploymentYAML("blue"),
	})
	w.ok("environment", "create", "-f", filepath.Join(dir, "env.yml"))
	train := w.create(filepath.Join(dir, "train.yml"))
	if r := w.run("job", "stream", "-n", train); r.code != 0 {
		t.Fatalf("training job: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	writeFiles(t, dir, map[string]string{"model.yml": "name: m\npath: azureml://jobs/" + train + "/outputs/model\n" +
		"description: '<img src=x onerror=\"window.__xss=4\">weights'\n" +
		"tags:\n  note: '<script>window.__xss=3</script>'\n  team: vision\n"})
	w.ok("model", "create", "-f", filepath.Join(dir, "model.yml"))
	admin := w.adminToken()
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/2.0/mlflow/registered-models/alias", `{"name": "m", "alias": "champion", "version": "1"}`},
		{http.MethodPost, "/api/2.0/mlflow/model-versions/transition-stage", `{"name": "m", "version": "1", "stage": "Staging", "archive_existing_versions": false}`},
		{http.MethodPatch, "/api/2.0/mlflow/registered-models/update", `{"name": "m", "description": "flowers <b>v</b>"}`},
		{http.MethodPost, "/api/2.0/mlflow/registered-models/set-tag", `{"name": "m", "key": "owner", "value": "<script>window.__xss=5</script>"}`},
	} {
		if st, e := w.post(admin, c.method, c.path, strings.NewReader(c.body), int64(len(c.body))); st != http.StatusOK {
			t.Fatalf("%s: %d %+v", c.path, st, e)
		}
	}
	w.ok("online-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"))
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "blue.yml"), "--all-traffic")

	var shown struct {
		Version string `json:"version"`
		Lineage struct {
			Aliases []string `json:"aliases"`
			Run     struct {
				Name         string `json:"name"`
				CodeSnapshot string `json:"code_snapshot"`
				Environment  struct{ Name, Version string }
				Inputs       []struct{ Name, Type, Path string }
			} `json:"run"`
			Deployments []struct{ Kind, Endpoint, Deployment, Ref, Version string }
		} `json:"lineage"`
	}
	w.jsonOut(&shown, "model", "show", "m:1")
	l := shown.Lineage
	if l.Run.Name != train || l.Run.CodeSnapshot == "" || l.Run.Environment.Name != "lineage-python" || l.Run.Environment.Version != "1" ||
		len(l.Run.Inputs) != 1 || l.Run.Inputs[0].Name != "rows" || len(l.Aliases) != 1 || l.Aliases[0] != "champion" ||
		len(l.Deployments) != 1 || l.Deployments[0].Deployment != "blue" || l.Deployments[0].Ref != "m:1" || l.Deployments[0].Version != "1" {
		t.Fatalf("model show m:1 -o json: %+v", shown)
	}
	if out := w.ok("model", "show", "m:1").stdout; !strings.Contains(out, "Environment: lineage-python:1") ||
		!strings.Contains(out, "online my-endpoint/blue: m:1 (version 1") {
		t.Errorf("model show m:1 text lacks the lineage:\n%s", out)
	}

	link := strings.TrimSpace(w.ok("studio").stdout)
	base, _, _ := strings.Cut(link, "#login=")
	p := page{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	p.open(strings.TrimPrefix(link, base))
	p.wait("the jobs list", `!!document.querySelector('#jobs')`)
	p.open("#/models")
	p.wait("the model in the list", `!!document.querySelector('#models tr[data-model="m"] a')`)
	p.open("#/models/m")
	row := `document.querySelector('#versions tr[data-version="1"]')`
	p.wait("version 1's row", `!!`+row)
	sec := `document.querySelector('section.version[data-version="1"]')`
	for _, c := range []struct{ what, expr string }{
		{"the model's description as text", `document.querySelector('.model-description').textContent === 'flowers <b>v</b>'`},
		{"the model's tag as text", `document.querySelector('.model-tags').textContent === 'owner=<script>window.__xss=5</script>'`},
		{"MLflow stage Staging", row + `.querySelector('.mlflow-stage').textContent === 'Staging'`},
		{"the alias", row + `.querySelector('.aliases').textContent === '@champion'`},
		{"the tags as text", row + `.querySelector('.tags').textContent.includes('note=<script>window.__xss=3</script>') && ` +
			row + `.querySelector('.tags').textContent.includes('team=vision') && !` + row + `.querySelector('.tags script')`},
		{"the description as text", row + `.querySelector('.description').textContent === '<img src=x onerror="window.__xss=4">weights'`},
		{"the run linked", sec + `.querySelector('[data-fact=run] a').textContent === ` + jsString(train) +
			` && ` + sec + `.querySelector('[data-fact=run] a').getAttribute('href') === ` + jsString("#/jobs/"+train)},
		{"the run's code snapshot", `!!` + sec + `.querySelector('[data-fact=code] code')`},
		{"the environment name:version", sec + `.querySelector('[data-fact=environment]').textContent === 'lineage-python:1'`},
		{"the input data", sec + `.querySelector('tr[data-input="rows"]').textContent.includes('uri_file')`},
		{"the deployment row", sec + `.querySelector('tr[data-deployment="my-endpoint/blue"] .ref').textContent === 'm:1' && ` +
			sec + `.querySelector('tr[data-deployment="my-endpoint/blue"] .served').textContent === '1'`},
	} {
		p.wait(c.what, c.expr)
	}
	var xss bool
	p.eval(`window.__xss !== undefined || document.title !== 'Hangar studio'`, &xss)
	if xss {
		t.Error("markup in a model's tag or description ran")
	}
	p.shot("models")

	// And from the run's side: its page lists the version registered from it.
	p.open("#/jobs/" + train)
	p.wait("the registered version on the run's page", `document.querySelector('#registered-models tr[data-model="m:1"] a')?.getAttribute('href') === '#/models/m'`)
}
