package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
)

// model show's lineage as text: the run with its code, environment and data, or "uploaded";
// the deployments with the ref they name and the version it resolved to.
func TestShowLineage(t *testing.T) {
	run := &api.LineageRun{Name: "trainer", Output: "model", DisplayName: "train iris", ExperimentName: "iris",
		Status: job.Completed, CodeSnapshot: "abc123",
		Environment: api.LineageEnvironment{Name: "team", Version: "1", Ref: "team@latest"},
		Inputs:      []api.LineageInput{{Name: "train", Type: job.URIFolder, Path: "azureml:iris:2"}}}
	tests := []struct {
		name string
		l    api.ModelLineage
		want []string
	}{
		{"from a run, deployed", api.ModelLineage{Aliases: []string{"champion", "prod"}, Run: run,
			Deployments: []api.ModelDeployment{{Kind: "online", Endpoint: "ep", Deployment: "blue", Ref: "m@champion", Version: "1", State: "Succeeded"},
				{Kind: "batch", Endpoint: "b", Deployment: "nightly", Ref: "m:1", Version: "1"}}},
			[]string{"Lineage:\n  Run: trainer (train iris), Completed, experiment iris\n  Output: model\n" +
				"  Code snapshot: abc123\n  Environment: team:1\n  Input data:\n    train (uri_folder): azureml:iris:2\n",
				"Deployments:\n  online ep/blue: m@champion (version 1, Succeeded)\n  batch b/nightly: m:1 (version 1)\n"}},
		{"uploaded, not deployed", api.ModelLineage{},
			[]string{"Lineage:\n  files uploaded from the client (no run)\n", "Deployments:\n  none\n"}},
		{"its run deleted", api.ModelLineage{Run: &api.LineageRun{Name: "gone", Output: "artifacts", Deleted: true}},
			[]string{"Run: gone (deleted)\n  Output: artifacts\n"}},
		{"an inline environment, no code, no data", api.ModelLineage{Run: &api.LineageRun{Name: "r", Status: job.Failed,
			Environment: api.LineageEnvironment{Image: "python:3.12"}}},
			[]string{"Code snapshot: none (the job had no code)", "Environment: inline, image python:3.12", "Input data: none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := showLineage(&b, &tt.l); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// model show -o json is the version's own fields with its lineage beside them.
func TestModelShownJSON(t *testing.T) {
	v := &model.Version{Name: "m", Version: "2", Type: model.MLflowModel, MLflowStage: "Production"}
	b, err := json.Marshal(modelShown{Version: v, Lineage: &api.ModelLineage{Name: "m", Version: "2", Aliases: []string{"champion"}}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	l, _ := got["lineage"].(map[string]any)
	if got["name"] != "m" || got["version"] != "2" || got["mlflow_stage"] != "Production" || l == nil || l["aliases"].([]any)[0] != "champion" {
		t.Errorf("model show -o json = %s", b)
	}
}

// model show against a workspace: with the lineage route the lineage follows the version; a
// server older than the route (404 for it, the version found) shows the version alone.
func TestModelShowAsksForLineage(t *testing.T) {
	for _, tt := range []struct {
		name    string
		lineage bool
		want    []string
		notWant string
	}{
		{"lineage", true, []string{"Name:", "Use as:", "Lineage:\n  Run: trainer", "Deployments:\n  none\n"}, ""},
		{"older server", false, []string{"Name:", "Use as:"}, "Lineage"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("GET /api/models/m/versions/1", func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewEncoder(w).Encode(model.Version{Name: "m", Version: "1", Source: "azureml://jobs/trainer/outputs/model"})
			})
			mux.HandleFunc("GET /api/models/m/versions/1/lineage", func(w http.ResponseWriter, r *http.Request) {
				if !tt.lineage {
					w.WriteHeader(http.StatusNotFound)
					_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: "no route", Code: api.CodeNotFound})
					return
				}
				_ = json.NewEncoder(w).Encode(api.ModelLineage{Name: "m", Version: "1", Run: &api.LineageRun{Name: "trainer", Output: "model"}})
			})
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			f := &fakeJobs{url: srv.URL}
			code, out, stderr := f.cliRun(t, "", false, "model", "show", "m:1")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tt.notWant != "" && strings.Contains(out, tt.notWant) {
				t.Errorf("output has %q:\n%s", tt.notWant, out)
			}
		})
	}
}
