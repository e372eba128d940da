package controller

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
)

// plainBox "seals" by base64: the keys' sealing is the secrets package's, not this test's.
type plainBox struct{}

func (plainBox) Encrypt(b []byte) (string, error) { return base64.StdEncoding.EncodeToString(b), nil }
func (plainBox) Decrypt(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// servingPass runs one pass of the serving loop and returns what it published.
func servingPass(t *testing.T, f *fixture) ServingState {
	t.Helper()
	var got ServingState
	if err := f.c.ServingPass(t.Context(), Serving{Publish: func(st ServingState) { got = st }}); err != nil {
		t.Fatal(err)
	}
	return got
}

// replicasOf returns the deployment's replica runs (oldest first) and the ready ones published.
func replicasOf(t *testing.T, f *fixture, st ServingState) (runs []string, ready []string) {
	t.Helper()
	reps, _, err := f.c.ReplicaRuns(t.Context(), "ep-one", "blue")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		runs = append(runs, r.RunID)
	}
	for _, e := range st.Endpoints {
		for _, d := range e.Deployments {
			for _, r := range d.Replicas {
				ready = append(ready, r.RunID)
			}
		}
	}
	return runs, ready
}

// serve makes a replica run Running with an address, as its supervisor would.
func serve(t *testing.T, f *fixture, run, addr string) {
	t.Helper()
	f.report(t, run, job.Running)
	if err := f.c.ReportServing(t.Context(), run, addr); err != nil {
		t.Fatal(err)
	}
}

// An update replaces a deployment's replica without a failed request: the new one starts, and
// once it is ready the old one leaves the router's table at once but is told to stop only when
// the requests it was sent have had their request_timeout_ms.
func TestServingUpdateDrainsTheOldReplica(t *testing.T) {
	f := newFixture(t)
	f.c.Secrets = plainBox{}
	ctx := t.Context()
	if _, err := f.c.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-one"}); err != nil {
		t.Fatal(err)
	}
	dep := serving.Deployment{Name: "blue", Endpoint: "ep-one", Command: "serve-on-port",
		Request: serving.RequestSettings{RequestTimeoutMS: 3000}}
	if _, err := f.c.CreateDeployment(ctx, dep, true); err != nil {
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
	if _, err := f.c.UpdateDeployment(ctx, dep); err != nil {
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
}

// A replica run's spec carries its secret, the one the router's table gives that replica: one
// per replica; a run that is no replica gets none.
func TestReplicaSecretInSpecAndTable(t *testing.T) {
	f := newFixture(t)
	f.c.Secrets = plainBox{}
	ctx := t.Context()
	if _, err := f.c.CreateEndpoint(ctx, serving.Endpoint{Name: "ep-one"}); err != nil {
		t.Fatal(err)
	}
	dep := serving.Deployment{Name: "blue", Endpoint: "ep-one", Command: "serve-on-port", InstanceCount: 2}
	if _, err := f.c.CreateDeployment(ctx, dep, true); err != nil {
		t.Fatal(err)
	}
	runs, _ := replicasOf(t, f, servingPass(t, f))
	if len(runs) != 2 {
		t.Fatalf("replicas: %v, want 2", runs)
	}
	secrets := map[string]string{}
	for i, run := range runs {
		sp, err := f.c.RunSpec(ctx, run, "", "")
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
	for _, e := range servingPass(t, f).Endpoints {
		for _, d := range e.Deployments {
			for _, r := range d.Replicas {
				if r.Secret != secrets[r.RunID] {
					t.Errorf("the router's table gives replica %s secret %q, its spec %q", r.RunID, r.Secret, secrets[r.RunID])
				}
			}
		}
	}
	plain := f.create(t, job.Spec{Command: "true", Compute: "local"})
	if sp, err := f.c.RunSpec(ctx, plain.ID, "", ""); err != nil || sp.Replica != nil {
		t.Errorf("a run that is no replica: %+v, %v; want no replica config", sp.Replica, err)
	}
}
