package controller

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// secretUsers adds users of the roles given to the fixture's store.
func secretUsers(t *testing.T, f *fixture, roles map[string]string) {
	t.Helper()
	for name, role := range roles {
		if err := f.c.Store.Access.CreateUser(t.Context(), store.User{Name: name, Role: role, CreatedAt: f.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
}

// submittedBy is a job spec naming secret db in DB_PASSWORD, submitted by user (as the server
// stamps it).
func submittedBy(user string) job.Spec {
	return job.Spec{Command: "env", EnvironmentVariables: map[string]string{"DB_PASSWORD": "${{secrets.db}}"},
		Meta: asset.Meta{Properties: workspace.StampSubmitter(nil, user)}}
}

// A secret limited to a user and a role is refused at submit to anyone else, naming the secret
// and who may use it; owners always may. A run whose submitter lost the access while it waited
// (the limit changed, or the user was deleted) gets no value, and is told why.
func TestSecretAccessAtSubmitAndAtFetch(t *testing.T) {
	f, _ := newSecretFixture(t)
	ctx := t.Context()
	secretUsers(t, f, map[string]string{"rita": api.RoleContributor, "bob": api.RoleContributor, "olga": api.RoleOwner})
	if _, err := f.c.Workspace.Secrets.Set(ctx, "db", "pa55", &api.SecretAccess{Users: []string{"rita", "rita"}, Roles: []string{api.RoleComputeOperator}}); err != nil {
		t.Fatal(err)
	}
	_, err := f.c.Workspace.Secrets.Set(ctx, "db", "pa55", &api.SecretAccess{Users: []string{"ritta"}})
	wantKind(t, err, Invalid, `access.users: no user named "ritta"`)
	_, err = f.c.Workspace.Secrets.Set(ctx, "db", "pa55", &api.SecretAccess{Roles: []string{"admin"}})
	wantKind(t, err, Invalid, `access.roles: "admin" is not a role`)
	list, err := f.c.Workspace.Secrets.List(ctx)
	if err != nil || len(list) != 1 || list[0].Access.String() != "owners, user rita, role compute-operator" {
		t.Fatalf("secret list = %+v, %v; want db limited to rita and compute-operators", list, err)
	}

	_, err = f.c.Create(ctx, api.CreateJobRequest{Spec: submittedBy("bob")})
	wantKind(t, err, Invalid, "environment_variables.DB_PASSWORD: secret db may be used by owners, user rita, role compute-operator only",
		"user bob (role contributor) may not use it", "hangar secret access db")
	_, err = f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "env", EnvironmentVariables: submittedBy("").EnvironmentVariables}})
	wantKind(t, err, Invalid, "this run records no submitter")
	mine := f.create(t, submittedBy("rita"))
	owners := f.create(t, submittedBy("olga"))
	admins := f.create(t, submittedBy(api.AdminUser))
	for _, r := range []*job.Run{mine, owners, admins} {
		if vals, err := f.c.Workspace.Secrets.ForRun(ctx, r.ID); err != nil || vals["db"] != "pa55" {
			t.Errorf("secrets of %s's run = %v, %v", workspace.Submitter(&r.Spec), vals, err)
		}
	}

	// Rita's access is removed while her next run waits; then she is deleted.
	queued := f.create(t, submittedBy("rita"))
	if _, err := f.c.Workspace.Secrets.SetAccess(ctx, "db", api.SecretAccess{Roles: []string{api.RoleOwner}}); err != nil {
		t.Fatal(err)
	}
	_, err = f.c.Workspace.Secrets.ForRun(ctx, queued.ID)
	wantKind(t, err, Conflict, "environment_variables.DB_PASSWORD: secret db may be used by owners, role owner only", "user rita (role contributor) may not use it")
	if _, err := f.c.Workspace.Secrets.SetAccess(ctx, "db", api.SecretAccess{Users: []string{"rita"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Store.Access.DeleteUser(ctx, "rita"); err != nil {
		t.Fatal(err)
	}
	_, err = f.c.Workspace.Secrets.ForRun(ctx, queued.ID)
	wantKind(t, err, Conflict, "user rita is no longer a user of this workspace")
	if vals, err := f.c.Workspace.Secrets.ForRun(ctx, owners.ID); err != nil || vals["db"] != "pa55" {
		t.Errorf("an owner's run after the change = %v, %v", vals, err)
	}
	// Opened again, every submitter's run gets it.
	if _, err := f.c.Workspace.Secrets.SetAccess(ctx, "db", api.SecretAccess{}); err != nil {
		t.Fatal(err)
	}
	if vals, err := f.c.Workspace.Secrets.ForRun(ctx, queued.ID); err != nil || vals["db"] != "pa55" {
		t.Errorf("the queued run once the secret is open = %v, %v", vals, err)
	}
	_, err = f.c.Workspace.Secrets.SetAccess(ctx, "nope", api.SecretAccess{})
	wantKind(t, err, NotFound, "nope")
}

// A sweep's trials get their sweep's submitter (whatever the trial's spec claimed), so that the
// access checked at submit is the one checked when a trial fetches the values.
func TestSweepTrialsTakeTheirSweepsSubmitter(t *testing.T) {
	f := newSweepFixture(t)
	sp := sweepSpec(1, 1)
	sp.Properties = workspace.StampSubmitter(map[string]string{}, "rita")
	p := f.createSweep(t, sp)
	f.sweepPass(t)
	ts := f.trials(t, p.ID)
	if len(ts) != 1 || ts[0].Run == nil || workspace.Submitter(&ts[0].Run.Spec) != "rita" {
		t.Fatalf("trials %+v; want one, submitted by rita", ts)
	}
}

// StampSubmitter overwrites what a client claimed, and removes it when there is no one to stamp.
func TestStampSubmitter(t *testing.T) {
	props := workspace.StampSubmitter(map[string]string{workspace.PropSubmitter: "admin", "team": "vision"}, "bob")
	if props[workspace.PropSubmitter] != "bob" || props["team"] != "vision" {
		t.Errorf("stamped %v", props)
	}
	if props := workspace.StampSubmitter(map[string]string{workspace.PropSubmitter: "admin"}, ""); props[workspace.PropSubmitter] != "" {
		t.Errorf("a claim kept without a submitter: %v", props)
	}
}

// A pipeline's step naming a secret the pipeline's submitter may not use is refused at submit,
// with the step's field path, whatever the step's own properties claim; the steps' runs carry
// the pipeline's submitter.
func TestPipelineStepsTakeThePipelinesSubmitter(t *testing.T) {
	f, _ := newSecretFixture(t)
	ctx := t.Context()
	secretUsers(t, f, map[string]string{"bob": api.RoleContributor})
	if _, err := f.c.Workspace.Secrets.Set(ctx, "db", "pa55", &api.SecretAccess{Roles: []string{api.RoleOwner}}); err != nil {
		t.Fatal(err)
	}
	sp := chainSpec()
	sp.Properties = workspace.StampSubmitter(nil, "bob")
	prep := sp.Pipeline.Steps["prep"]
	prep.Spec.EnvironmentVariables = map[string]string{"DB": "${{secrets.db}}"}
	prep.Spec.Properties = workspace.StampSubmitter(nil, api.AdminUser) // what a client may claim
	sp.Pipeline.Steps["prep"] = prep
	_, err := f.c.Create(ctx, api.CreateJobRequest{Spec: sp})
	wantKind(t, err, Invalid, "jobs.prep.environment_variables.DB: secret db may be used by owners, role owner only", "user bob (role contributor)")

	sp = chainSpec()
	sp.Properties = workspace.StampSubmitter(nil, "bob")
	p := f.createPipeline(t, sp)
	f.pipelinePass(t)
	st := f.steps(t, p.ID)["prep"]
	if st.Run == nil || workspace.Submitter(&st.Run.Spec) != "bob" {
		t.Fatalf("step prep = %+v; want its run submitted by bob", st)
	}
}
