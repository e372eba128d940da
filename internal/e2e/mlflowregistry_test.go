package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/tracking/trackingtest"
)

// registryClient reads and writes MLflow's model registry with a real MLflow client nobody here wrote (npm
// mlflow@2.0.7). The package has no registry calls; its exported transport, MLflowBase.req,
// sends them as it sends its own (a GET's fields as the query, arrays as repeated keys; a POST's
// as a JSON body). Every answer, or the error it threw, is written to $OUT.
const registryClient = `const path = require("path");
const fs = require("fs");
const { MLflowBase } = require(path.join(process.env.MLFLOW_JS_DIR, "node_modules", "mlflow", "lib", "mlflow"));
console.log = () => {}; // the package prints every POST body
class Registry extends MLflowBase {
  constructor(args, p) { super(args); this.path = p; }
}
const args = { endpoint: process.env.HANGAR_URL, headers: { Authorization: "Bearer " + process.env.HANGAR_TOKEN } };
const models = new Registry(args, "/registered-models");
const versions = new Registry(args, "/model-versions");
(async () => {
  const out = {};
  const call = async (name, f) => {
    try { out[name] = await f(); } catch (e) { out[name] = { thrown: String(e.message) }; }
  };
  await call("get", () => models.req("get", "/get", { name: "iris" }));
  await call("version", () => versions.req("get", "/get", { name: "iris", version: "2" }));
  await call("latest", () => models.req("post", "/get-latest-versions", { name: "iris", stages: ["None"] }));
  await call("search", () => models.req("get", "/search", {
    filter: "name LIKE 'ir%' AND tag.` + "`mlflow.prompt.is_prompt`" + ` != 'true'", max_results: 100, order_by: ["name ASC"] }));
  await call("versions", () => versions.req("get", "/search", {
    filter: "name = 'iris'", max_results: 10000, order_by: ["version_number DESC", "name ASC"] }));
  await call("unknown", () => models.req("get", "/no-such-thing", { name: "iris" }));
  // mlflow.register_model("runs:/<job>/outputs/model", "flowers"): create the registered model,
  // then the version from the run's files; creating the name again is RESOURCE_ALREADY_EXISTS.
  await call("create", () => models.req("post", "/create", { name: "flowers", description: "from MLflow" }));
  await call("createAgain", () => models.req("post", "/create", { name: "flowers" }));
  await call("createVersion", () => versions.req("post", "/create", {
    name: "flowers", source: "runs:/" + process.env.JOB_ID + "/outputs/model", run_id: process.env.JOB_ID }));
  // models:/flowers/1, as MLflow's client resolves it: the download URI, then the artifact
  // proxy's listing and a file under it (the package has no artifact calls: fetch, with the same
  // token).
  await call("downloadURI", () => versions.req("get", "/get-download-uri", { name: "flowers", version: "1" }));
  const p = (out.downloadURI.artifact_uri || "").replace(/^mlflow-artifacts:\//, "");
  const art = process.env.HANGAR_URL + "/api/2.0/mlflow-artifacts/artifacts";
  await call("listing", async () => (await fetch(art + "?path=" + encodeURIComponent(p), { headers: args.headers })).json());
  // Tags set through MLflow are the Hangar version's; the package's DELETE sends the query.
  await call("setTag", () => versions.req("post", "/set-tag", { name: "flowers", version: "1", key: "team", value: "vision" }));
  await call("setTag2", () => versions.req("post", "/set-tag", { name: "flowers", version: "1", key: "gone", value: "x" }));
  await call("deleteTag", () => versions.req("delete", "/delete-tag", { name: "flowers", version: "1", key: "gone" }));
  await call("setAlias", () => models.req("post", "/alias", { name: "flowers", alias: "champion", version: "1" }));
  await call("byAlias", () => models.req("get", "/alias", { name: "flowers", alias: "champion" }));
  await call("file", async () => (await fetch(art + "/" + p + "/model.pkl", { headers: args.headers })).text());
  // Deletes and a rename: the package's DELETE sends its fields as the query.
  await call("deleteVersion", () => versions.req("delete", "/delete", { name: "iris", version: "1" }));
  await call("rename", () => models.req("post", "/rename", { name: "iris", new_name: "irises" }));
  await call("deleteGhost", () => models.req("delete", "/delete", { name: "ghost" }));
  fs.writeFileSync(process.env.OUT, JSON.stringify(out));
})().catch((e) => { process.stderr.write(String(e) + "\n"); process.exit(1); });
`

// MLflow's registry is Hangar's models: what `hangar model create` registers (from a job's
// output and from a local folder) is what an MLflow client reads, version for version, with the
// run it came from; a version that is not an integer stays Hangar's only. What the MLflow client
// registers from a run (registered-models/create, model-versions/create) is a Hangar model
// version: model show sees it (with the tags MLflow set) and a job takes it as azureml:flowers:1;
// models:/flowers/1 downloads it through the artifact proxy.
func TestMLflowClientSharesHangarRegistry(t *testing.T) {
	dir := trackingtest.NodeClientDir(t)
	w := newWS(t)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"train.yml":       "command: >-\n  mkdir -p ${{outputs.model}} outputs/model && echo 'flavors: {}' > ${{outputs.model}}/MLmodel &&\n  echo 'flavors: {}' > outputs/model/MLmodel && echo weights > outputs/model/model.pkl\noutputs:\n  model: {type: mlflow_model}\n",
		"use.yml":         "command: cat ${{inputs.m}}/model.pkl\ninputs:\n  m: {type: mlflow_model, path: azureml:flowers:1}\n",
		"local/MLmodel":   "flavors: {}\n",
		"local/model.pkl": "weights",
		"client.js":       registryClient,
	})
	train := w.create(filepath.Join(src, "train.yml"))
	if r := w.run("job", "stream", "-n", train); r.code != 0 {
		t.Fatalf("training job: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var v1, v2 model.Version
	w.modelJSON(&v1, "model", "create", "--name", "iris", "--type", "mlflow_model", "--path", "azureml://jobs/"+train+"/outputs/model")
	w.modelJSON(&v2, "model", "create", "--name", "iris", "--path", filepath.Join(src, "local"), "--description", "from a folder")
	w.ok("model", "create", "--name", "iris", "--version", "0.0.1", "--path", filepath.Join(src, "local"))

	out := filepath.Join(t.TempDir(), "out.json")
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(src, "client.js"))
	cmd.Env = append(os.Environ(), "MLFLOW_JS_DIR="+dir, "HANGAR_URL="+w.url(), "HANGAR_TOKEN="+w.adminToken(), "OUT="+out, "JOB_ID="+train)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node client: %v\n%s", err, b)
	}
	var got struct {
		Get struct {
			RegisteredModel struct {
				Name           string           `json:"name"`
				LatestVersions []map[string]any `json:"latest_versions"`
			} `json:"registered_model"`
		}
		Version struct {
			ModelVersion map[string]any `json:"model_version"`
		}
		Latest struct {
			ModelVersions []map[string]any `json:"model_versions"`
		}
		Search struct {
			RegisteredModels []map[string]any `json:"registered_models"`
		}
		Versions struct {
			ModelVersions []map[string]any `json:"model_versions"`
		}
		Unknown struct{ Thrown string }
		Create  struct {
			RegisteredModel map[string]any `json:"registered_model"`
		}
		CreateAgain   struct{ Thrown string }
		CreateVersion struct {
			ModelVersion map[string]any `json:"model_version"`
		}
		ByAlias struct {
			ModelVersion map[string]any `json:"model_version"`
		}
		DownloadURI struct {
			ArtifactURI string `json:"artifact_uri"`
		}
		Listing       struct{ Files []struct{ Path string } }
		File          string
		DeleteVersion map[string]any
		Rename        struct {
			RegisteredModel struct {
				Name           string           `json:"name"`
				LatestVersions []map[string]any `json:"latest_versions"`
			} `json:"registered_model"`
		}
		DeleteGhost struct{ Thrown string }
	}
	if err := json.Unmarshal([]byte(readFile(t, out)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Get.RegisteredModel.Name != "iris" || len(got.Get.RegisteredModel.LatestVersions) != 1 ||
		got.Get.RegisteredModel.LatestVersions[0]["version"] != "2" {
		t.Errorf("registered-models/get = %+v", got.Get)
	}
	mv := got.Version.ModelVersion
	if mv["version"] != "2" || mv["status"] != "READY" || mv["description"] != "from a folder" || mv["current_stage"] != "None" ||
		mv["creation_timestamp"] != float64(v2.CreatedAt.UnixMilli()) || mv["source"] != v2.Source {
		t.Errorf("model-versions/get iris 2 = %v; hangar has %+v", mv, v2)
	}
	if len(got.Latest.ModelVersions) != 1 || got.Latest.ModelVersions[0]["version"] != "2" {
		t.Errorf("get-latest-versions = %v", got.Latest.ModelVersions)
	}
	if len(got.Search.RegisteredModels) != 1 || got.Search.RegisteredModels[0]["name"] != "iris" {
		t.Errorf("registered-models/search = %v", got.Search.RegisteredModels)
	}
	var seen []string
	for _, v := range got.Versions.ModelVersions {
		run, _ := v["run_id"].(string) // absent for an upload
		seen = append(seen, v["version"].(string)+"@"+run)
	}
	if strings.Join(seen, ",") != "2@,1@"+train {
		t.Errorf("model-versions/search = %v, want 2 (uploaded) then 1 (from run %s); 0.0.1 is not MLflow's", seen, train)
	}
	if !strings.Contains(got.Unknown.Thrown, `"status":404`) || !strings.Contains(got.Unknown.Thrown, "ENDPOINT_NOT_FOUND") {
		t.Errorf("an unknown registry path: %q, want 404 ENDPOINT_NOT_FOUND", got.Unknown.Thrown)
	}
	if v1.Source != "azureml://jobs/"+train+"/outputs/model" {
		t.Errorf("model create from the job = %+v", v1)
	}

	// What MLflow registered is a Hangar model version: model show sees it, a job uses it.
	if got.Create.RegisteredModel["name"] != "flowers" || !strings.Contains(got.CreateAgain.Thrown, "RESOURCE_ALREADY_EXISTS") {
		t.Errorf("registered-models/create = %v, again: %q", got.Create, got.CreateAgain.Thrown)
	}
	if mv := got.CreateVersion.ModelVersion; mv["version"] != "1" || mv["status"] != "READY" || mv["run_id"] != train {
		t.Errorf("model-versions/create = %v", mv)
	}
	if mv := got.ByAlias.ModelVersion; mv["version"] != "1" || fmt.Sprint(mv["aliases"]) != "[champion]" {
		t.Errorf("models:/flowers@champion = %v", mv)
	}
	var f1 model.Version
	w.modelJSON(&f1, "model", "show", "flowers:1")
	if f1.Tags["team"] != "vision" || len(f1.Tags) != 1 {
		t.Errorf("model show flowers:1 tags = %v, want team=vision only (set-tag, then delete-tag)", f1.Tags)
	}
	if f1.Files != 2 || f1.Type != model.MLflowModel || f1.Folder != "model" || f1.Source != "azureml://jobs/"+train+"/outputs/artifacts/paths/outputs/model" {
		t.Errorf("model show flowers:1 = %+v", f1)
	}
	// The URI is the version's own files in the artifact proxy (the files it was registered with).
	if want := "mlflow-artifacts:/registered-models/flowers/1"; got.DownloadURI.ArtifactURI != want ||
		len(got.Listing.Files) != 2 || got.File != "weights\n" {
		t.Errorf("models:/flowers/1: download URI %q (want %s), listing %+v, model.pkl %q", got.DownloadURI.ArtifactURI, want, got.Listing, got.File)
	}
	// model show says the MLflow stage and the aliases set through MLflow.
	if r := w.run("model", "show", "flowers:1"); r.code != 0 || !strings.Contains(r.stdout, "MLflow stage: None\n") || !strings.Contains(r.stdout, "Aliases:      champion\n") {
		t.Errorf("model show flowers:1: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// iris:1, deleted through MLflow, is gone; the rename took the rest (0.0.1 too) to irises;
	// hangar model delete takes the whole model, and the name registered again goes on from 2.
	if len(got.DeleteVersion) != 0 || got.Rename.RegisteredModel.Name != "irises" || len(got.Rename.RegisteredModel.LatestVersions) != 1 ||
		got.Rename.RegisteredModel.LatestVersions[0]["version"] != "2" {
		t.Errorf("model-versions/delete = %v, registered-models/rename = %+v", got.DeleteVersion, got.Rename)
	}
	if !strings.Contains(got.DeleteGhost.Thrown, `"status":404`) || !strings.Contains(got.DeleteGhost.Thrown, "RESOURCE_DOES_NOT_EXIST") {
		t.Errorf("registered-models/delete of a missing model: %q", got.DeleteGhost.Thrown)
	}
	var irises []model.Version
	w.modelJSON(&irises, "model", "list", "--name", "irises", "--include-archived")
	if len(irises) != 2 || irises[0].Version+","+irises[1].Version != "0.0.1,2" {
		t.Errorf("model list irises = %+v, want 2 and 0.0.1", irises)
	}
	if r := w.run("model", "show", "irises:1"); r.code == 0 {
		t.Errorf("model show of a deleted version: exit 0\n%s", r.stdout)
	}
	w.ok("model", "delete", "irises", "--yes")
	w.modelJSON(&irises, "model", "list", "--name", "irises", "--include-archived")
	var again model.Version
	w.modelJSON(&again, "model", "create", "--name", "irises", "--path", filepath.Join(src, "local"))
	if len(irises) != 0 || again.Version != "3" {
		t.Errorf("after model delete: list %+v, a new version %s (want none, then 3)", irises, again.Version)
	}

	use := w.create(filepath.Join(src, "use.yml"))
	if r := w.run("job", "stream", "-n", use); r.code != 0 || !strings.Contains(r.stdout, "weights") {
		t.Errorf("a job with azureml:flowers:1 as input: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
