package endpoints

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
)

// A deployment whose image serves by its own entrypoint (inference_config, no command, no
// scoring script) is accepted and its replica is a run with no command that says so; one with
// nothing that serves, or no image to serve from, is refused naming the field.
func TestDeploymentServedByImageEntrypoint(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.s.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-one"}); err != nil {
		t.Fatal(err)
	}
	ic := &serving.InferenceConfig{LivenessPath: "/live", ReadinessPath: "/ready", ScoringPath: "/predict", Port: 8501}
	for _, tc := range []struct {
		name string
		dep  serving.Deployment
		want string
	}{
		{"nothing serves", serving.Deployment{Name: "none", Endpoint: "ep-one"},
			"code_configuration: required (a scoring script with init() and run()), unless the deployment gives a command that serves on $PORT or an environment image with an inference_config"},
		{"no image", serving.Deployment{Name: "noimage", Endpoint: "ep-one", Inference: ic},
			"environment.image: required for a deployment that serves by its image's entrypoint"},
	} {
		if _, err := f.s.CreateDeployment(ctx, tc.dep, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}

	dep := serving.Deployment{Name: "tfs", Endpoint: "ep-one", Inference: ic, Environment: job.Environment{Image: "tfs:1"}}
	if _, err := f.s.CreateDeployment(ctx, dep, true); err != nil {
		t.Fatal(err)
	}
	servingPass(t, f)
	reps, runs, err := f.s.ReplicaRuns(ctx, "ep-one", "tfs")
	if err != nil || len(reps) != 1 {
		t.Fatalf("replicas: %v %v", reps, err)
	}
	sp := runs[0].Spec
	if sp.Command != "" || sp.Serve == nil || !sp.Serve.Entrypoint || sp.Serve.Port != 8501 || sp.Serve.Probe != "/ready" ||
		sp.Environment.Image != "tfs:1" {
		t.Errorf("the replica's spec: command %q, serve %+v, image %q", sp.Command, sp.Serve, sp.Environment.Image)
	}
}
