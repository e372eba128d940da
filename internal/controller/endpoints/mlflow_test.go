package endpoints

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
)

// A deployment of a registered mlflow_model with no code_configuration (a no-code deployment)
// is accepted, and its replica runs the scoring server with the built-in MLflow scorer on the
// model's folder; the same deployment of a custom_model is refused.
func TestNoCodeMLflowDeployment(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.s.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-ncd"}); err != nil {
		t.Fatal(err)
	}
	h := putTree(t, f, map[string]string{"model/MLmodel": "flavors: {}\n", "model/model.pkl": "x"})
	createModel(t, f, model.Spec{Name: "flow", Path: "/client/model", Type: model.MLflowModel}, h)
	createModel(t, f, model.Spec{Name: "plain", Path: "/client/model"}, h)

	_, err := f.s.CreateDeployment(ctx, serving.Deployment{Name: "plain", Endpoint: "ep-ncd", Model: serving.ModelRef{Ref: "plain:1"}}, false)
	if err == nil || !strings.Contains(err.Error(), "code_configuration: required") {
		t.Errorf("a custom_model with no code: %v; want code_configuration required", err)
	}
	if _, err := f.s.CreateDeployment(ctx, serving.Deployment{Name: "ncd", Endpoint: "ep-ncd", Model: serving.ModelRef{Ref: "flow:1"}}, true); err != nil {
		t.Fatal(err)
	}
	servingPass(t, f)
	reps, runs, err := f.s.ReplicaRuns(ctx, "ep-ncd", "ncd")
	if err != nil || len(reps) != 1 {
		t.Fatalf("replicas: %v %v", reps, err)
	}
	sp := runs[0].Spec
	if sp.Command != serving.ReplicaCommand || sp.Serve == nil || !sp.Serve.MLflow || sp.Serve.ScoringScript != "" ||
		sp.Serve.ModelFolder != "model" || sp.Inputs[serving.ModelInput].Manifest != h {
		t.Errorf("the replica's spec: command %q, serve %+v, inputs %+v", sp.Command, sp.Serve, sp.Inputs)
	}
}
