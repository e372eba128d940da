package endpoints

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
)

// A deployment whose model is name@<alias> records the version it resolved; when the alias
// moves, the alias loop rolls it (a new generation: its replicas replaced the rolling way, the
// old one serving until the new one is ready); when the alias is deleted it keeps serving, and
// its state warns.
func TestDeploymentFollowsItsAlias(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	h1 := putTree(t, f, map[string]string{"w": "one"})
	h2 := putTree(t, f, map[string]string{"w": "two!"})
	createModel(t, f, model.Spec{Name: "clf", Path: "/x"}, h1)
	createModel(t, f, model.Spec{Name: "clf", Path: "/x"}, h2)
	models := f.ctrl.Workspace.Models
	if _, err := models.SetAlias(ctx, "clf", "champion", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-one"}); err != nil {
		t.Fatal(err)
	}
	dep := serving.Deployment{Name: "blue", Endpoint: "ep-one", Command: "serve-on-port", Model: serving.ModelRef{Ref: "clf@missing"}}
	_, err := f.s.CreateDeployment(ctx, dep, true)
	wantKind(t, err, controller.NotFound, "model: model clf has no alias missing (its aliases: champion → 1")
	dep.Model.Ref = "clf@champion"
	rec, err := f.s.CreateDeployment(ctx, dep, true)
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Spec.Model; m.Version != "1" || m.Manifest != h1 || m.Ref != "clf@champion" {
		t.Fatalf("stored model %+v, want the alias kept and version 1 recorded", m)
	}
	runs, _ := replicasOf(t, f, servingPass(t, f))
	serve(t, f, runs[0], "127.0.0.1:9001")
	servingPass(t, f)

	aliasPass := func() {
		t.Helper()
		if err := f.s.AliasPass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	aliasPass()
	if d, _ := f.s.Deployment(ctx, "ep-one", "blue"); d.Generation != 1 {
		t.Fatalf("rolled although the alias did not move: generation %d", d.Generation)
	}

	if _, err := models.SetAlias(ctx, "clf", "champion", "2"); err != nil {
		t.Fatal(err)
	}
	aliasPass()
	d, _ := f.s.Deployment(ctx, "ep-one", "blue")
	if d.Generation != 2 || d.Spec.Model.Version != "2" || d.Spec.Model.Manifest != h2 || d.State != DeploymentUpdating {
		t.Fatalf("after the alias moved: generation %d, %s, model %+v; want generation 2 Updating serving version 2", d.Generation, d.State, d.Spec.Model)
	}
	runs, ready := replicasOf(t, f, servingPass(t, f))
	if len(runs) != 2 || len(ready) != 1 {
		t.Fatalf("while the new replica starts: replicas %v, published %v; want the old one still serving", runs, ready)
	}
	aliasPass()
	if d, _ := f.s.Deployment(ctx, "ep-one", "blue"); d.Generation != 2 {
		t.Errorf("rolled again to where it is rolling: generation %d", d.Generation)
	}

	if err := models.DeleteAlias(ctx, "clf", "champion"); err != nil {
		t.Fatal(err)
	}
	aliasPass()
	next := runs[0]
	if next == ready[0] {
		next = runs[1]
	}
	serve(t, f, next, "127.0.0.1:9002")
	servingPass(t, f)
	d, _ = f.s.Deployment(ctx, "ep-one", "blue")
	if d.Generation != 2 || d.State != DeploymentSucceeded || !strings.Contains(d.Reason, "1 replica(s) ready; warning: model clf has no alias champion any more: still serving version 2") {
		t.Errorf("after the alias was deleted: generation %d, %s (%s); want it serving version 2, with a warning", d.Generation, d.State, d.Reason)
	}
	if w := f.s.AliasWarning("ep-one", "blue"); !strings.Contains(w, "no alias champion") {
		t.Errorf("AliasWarning = %q", w)
	}

	if _, err := models.SetAlias(ctx, "clf", "champion", "2"); err != nil { // set again where it was
		t.Fatal(err)
	}
	aliasPass()
	servingPass(t, f)
	if d, _ := f.s.Deployment(ctx, "ep-one", "blue"); d.Generation != 2 || d.Reason != "1 replica(s) ready" {
		t.Errorf("alias set again at the version served: generation %d, reason %q; want no roll and no warning", d.Generation, d.Reason)
	}
}

// A batch deployment of name@<alias> records the version; when the alias moves the alias loop
// stores it again at the new version, so that the next invoke's job reads that version's files.
func TestBatchDeploymentFollowsItsAlias(t *testing.T) {
	f, d := batchFixture(t)
	ctx := t.Context()
	h2 := putTree(t, f, map[string]string{"weights.json": `{"w": 4}`})
	createModel(t, f, model.Spec{Name: "m", Path: "/client/model"}, h2)
	if _, err := f.ctrl.Workspace.Models.SetAlias(ctx, "m", "champion", "1"); err != nil {
		t.Fatal(err)
	}
	d.Model.Ref = "m@champion"
	if _, err := f.s.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.s.BatchDeployment(ctx, "ep1", "rows"); got.Spec.Model.Version != "1" {
		t.Fatalf("stored model %+v, want version 1 recorded", got.Spec.Model)
	}
	if _, err := f.ctrl.Workspace.Models.SetAlias(ctx, "m", "champion", "2"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.AliasPass(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := f.s.BatchDeployment(ctx, "ep1", "rows")
	if got.Spec.Model.Version != "2" || got.Spec.Model.Manifest != h2 || got.Spec.Model.Ref != "m@champion" {
		t.Errorf("after the alias moved: model %+v, want version 2's files, still following the alias", got.Spec.Model)
	}
}
