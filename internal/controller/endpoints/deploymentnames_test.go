package endpoints

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/serving"
)

// An online deployment takes Azure's deployment names (issue 28): '_' as in its examples'
// regular_deployment, and names shorter than an endpoint's; its replicas are runs like any
// other's. A name Azure refuses is refused with the rule.
func TestOnlineDeploymentNamesAsAzures(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.s.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-one"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"regular_deployment", "b1"} {
		dep := serving.Deployment{Name: name, Endpoint: "ep-one", Command: "serve-on-port"}
		if _, err := f.s.CreateDeployment(ctx, dep, false); err != nil {
			t.Errorf("deployment %s: %v", name, err)
		}
	}
	servingPass(t, f)
	reps, _, err := f.s.ReplicaRuns(ctx, "ep-one", "regular_deployment")
	if err != nil || len(reps) != 1 {
		t.Errorf("replica runs of regular_deployment = %+v, %v; want one", reps, err)
	}
	_, err = f.s.CreateDeployment(ctx, serving.Deployment{Name: "_blue", Endpoint: "ep-one", Command: "serve-on-port"}, false)
	wantKind(t, err, controller.Invalid, `name: "_blue" must be 1 to 32 letters, digits, '_' and '-', starting with a letter or digit`)
}
