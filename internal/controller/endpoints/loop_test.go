package endpoints

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/router"
)

// servingPass runs one pass of the serving loop and returns what it published.
func servingPass(t *testing.T, f *fixture) router.Table {
	t.Helper()
	if err := f.s.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	return f.table
}

// replicasOf returns the deployment's replica runs (oldest first) and the ready ones published.
func replicasOf(t *testing.T, f *fixture, tbl router.Table) (runs []string, ready []string) {
	t.Helper()
	reps, _, err := f.s.ReplicaRuns(t.Context(), "ep-one", "blue")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		runs = append(runs, r.RunID)
	}
	for _, e := range tbl {
		for _, d := range e.Deployments {
			for _, r := range d.Replicas {
				ready = append(ready, r.ID)
			}
		}
	}
	return runs, ready
}

// serve makes a replica run Running with an address, as its supervisor would.
func serve(t *testing.T, f *fixture, run, addr string) {
	t.Helper()
	f.report(t, run, job.Running)
	if err := f.s.ReportServing(t.Context(), run, addr); err != nil {
		t.Fatal(err)
	}
}

// An update replaces a deployment's replica without a failed request: the new one starts, and
// once it is ready the old one leaves the router's table at once but is told to stop only when
// the requests it was sent have had their request_timeout_ms.
func TestServingUpdateDrainsTheOldReplica(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.s.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-one"}); err != nil {
		t.Fatal(err)
	}
	dep := serving.Deployment{Name: "blue", Endpoint: "ep-one", Command: "serve-on-port",
		Request: serving.RequestSettings{RequestTimeoutMS: 3000}}
	if _, err := f.s.CreateDeployment(ctx, dep, true); err != nil {
		t.Fatal(err)
	}
	runs, _ := replicasOf(t, f, servingPass(t, f))
	if len(runs) != 1 {
		t.Fatalf("replicas after create: %v", runs)
	}
	old := runs[0]
	serve(t, f, old, "127.0.0.1:9001")
	if _, ready := replicasOf(t, f, servingPass(t, f)); len(ready) != 1 || ready[0] != old {
		t.Fatalf("published %v, want the first replica", ready)
	}

	dep.EnvironmentVariables = map[string]string{"V": "2"}
	if _, err := f.s.UpdateDeployment(ctx, dep); err != nil {
		t.Fatal(err)
	}
	runs, ready := replicasOf(t, f, servingPass(t, f))
	if len(runs) != 2 || len(ready) != 1 || ready[0] != old {
		t.Fatalf("while the new replica starts: replicas %v, published %v; want the old one serving", runs, ready)
	}
	next := runs[0] // replicas created at the same instant are listed by run id
	if next == old {
		next = runs[1]
	}
	serve(t, f, next, "127.0.0.1:9002")
	_, ready = replicasOf(t, f, servingPass(t, f))
	if len(ready) != 1 || ready[0] != next {
		t.Fatalf("the new replica ready: published %v, want only %s", ready, next)
	}
	if st := f.run(t, old).Status; st != job.Running {
		t.Fatalf("the old replica was told to stop before its requests had their time: %s", st)
	}
	f.clock.Advance(2 * time.Second)
	servingPass(t, f)
	if st := f.run(t, old).Status; st != job.Running {
		t.Fatalf("stopped after 2 s of a 3 s request timeout: %s", st)
	}
	f.clock.Advance(2 * time.Second)
	_, ready = replicasOf(t, f, servingPass(t, f))
	if st := f.run(t, old).Status; st != job.CancelRequested {
		t.Errorf("the old replica after its drain: %s, want CancelRequested", st)
	}
	if len(ready) != 1 || ready[0] != next {
		t.Errorf("published %v, want only %s", ready, next)
	}
	want := []string{"queue ep-one/blue", "queue ep-one/blue", "cancel " + old}
	if got := f.runs.calls(); !slices.Equal(got, want) {
		t.Errorf("asked of the run core: %q, want %q", got, want)
	}
}

// A replica run's spec carries its secret, the one the router's table gives that replica: one
// per replica; a run that is no replica gets none.
func TestReplicaSecretInSpecAndTable(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.s.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-one"}); err != nil {
		t.Fatal(err)
	}
	dep := serving.Deployment{Name: "blue", Endpoint: "ep-one", Command: "serve-on-port", InstanceCount: 2}
	if _, err := f.s.CreateDeployment(ctx, dep, true); err != nil {
		t.Fatal(err)
	}
	runs, _ := replicasOf(t, f, servingPass(t, f))
	if len(runs) != 2 {
		t.Fatalf("replicas: %v, want 2", runs)
	}
	secrets := map[string]string{}
	for i, run := range runs {
		sp, err := f.ctrl.RunSpec(ctx, run, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if sp.Replica == nil || !strings.HasPrefix(sp.Replica.Secret, "hrs1.") || sp.Replica.AllInterfaces {
			t.Fatalf("replica %s's spec: %+v, want its secret, listening on its own address", run, sp.Replica)
		}
		secrets[run] = sp.Replica.Secret
		serve(t, f, run, "127.0.0.1:900"+strconv.Itoa(i))
	}
	if secrets[runs[0]] == secrets[runs[1]] {
		t.Fatalf("two replicas share the secret %s", secrets[runs[0]])
	}
	for _, e := range servingPass(t, f) {
		for _, d := range e.Deployments {
			for _, r := range d.Replicas {
				if r.Secret != secrets[r.ID] {
					t.Errorf("the router's table gives replica %s secret %q, its spec %q", r.ID, r.Secret, secrets[r.ID])
				}
			}
		}
	}
	plain := f.create(t, job.Spec{Command: "true", Compute: "local"})
	if sp, err := f.ctrl.RunSpec(ctx, plain.ID, "", ""); err != nil || sp.Replica != nil {
		t.Errorf("a run that is no replica: %+v, %v; want no replica config", sp.Replica, err)
	}
}

// While a new generation's replica waits in its target's queue (a pool at its max_instances
// during a roll), the deployment says what it waits for, as the replica's run says it, not only
// "starting replicas"; once it is ready, how many are.
func TestStartingDeploymentSaysWhatItsReplicaWaitsFor(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.s.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CreateDeployment(ctx, serving.Deployment{Name: "blue", Endpoint: "ep-one", Command: "serve-on-port"}, true); err != nil {
		t.Fatal(err)
	}
	runs, _ := replicasOf(t, f, servingPass(t, f))
	if d, _ := f.s.Deployment(ctx, "ep-one", "blue"); d.State != DeploymentCreating || d.Reason != "starting replicas" {
		t.Fatalf("a new deployment: %s (%s), want Creating (starting replicas)", d.State, d.Reason)
	}
	waits := "waiting for a node of pool (2 of 2 nodes busy, max_instances 2)"
	if _, err := f.ctrl.Store.RunWrites.UpdateRun(ctx, runs[0], func(r *job.Run) ([]job.Event, error) {
		r.StatusReason = waits // what the run core says of a run waiting in its target's queue
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	servingPass(t, f)
	want := "starting replicas: replica " + runs[0] + " is queued: " + waits
	if d, _ := f.s.Deployment(ctx, "ep-one", "blue"); d.State != DeploymentCreating || d.Reason != want {
		t.Errorf("its replica queued: %s (%s), want Creating (%s)", d.State, d.Reason, want)
	}
	serve(t, f, runs[0], "127.0.0.1:9001")
	servingPass(t, f)
	if d, _ := f.s.Deployment(ctx, "ep-one", "blue"); d.State != DeploymentSucceeded || d.Reason != "1 replica(s) ready" {
		t.Errorf("its replica ready: %s (%s)", d.State, d.Reason)
	}
}
