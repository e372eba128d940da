package controller

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/secrets"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// newSecretFixture is a fixture whose controller seals with a key file in a temp dir.
func newSecretFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "secret.key")
	box, err := secrets.OpenBox(path)
	if err != nil {
		t.Fatal(err)
	}
	f.c.Secrets = box
	f.c.Workspace.Sealer = f.c.Secrets
	return f, path
}

func TestSecretsAreNamedByJobsAndGivenOnlyToTheirRuns(t *testing.T) {
	f, _ := newSecretFixture(t)
	ctx := t.Context()
	const value = "hf_Sup3rS3cret"
	if _, err := f.c.Workspace.Secrets.Set(ctx, "bad-name", "x", nil); err == nil {
		t.Fatal("a name with '-' was accepted")
	}
	if _, err := f.c.Workspace.Secrets.Set(ctx, "hf_token", "", nil); err == nil {
		t.Fatal("an empty value was accepted")
	}
	if created, err := f.c.Workspace.Secrets.Set(ctx, "hf_token", value, nil); err != nil || !created {
		t.Fatalf("set = %v, %v", created, err)
	}
	if _, err := f.c.Workspace.Secrets.Set(ctx, "other", "other-value", nil); err != nil {
		t.Fatal(err)
	}

	_, err := f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "env",
		EnvironmentVariables: map[string]string{"TOKEN": "${{secrets.nope}}"}}})
	wantKind(t, err, Invalid, "environment_variables.TOKEN", `no secret named "nope"`, "known: hf_token, other")

	r := f.create(t, job.Spec{EnvironmentVariables: map[string]string{"HF_TOKEN": "${{secrets.hf_token}}"}})
	if got := f.run(t, r.ID).Spec.EnvironmentVariables["HF_TOKEN"]; got != "${{secrets.hf_token}}" {
		t.Fatalf("stored spec holds %q, want the reference", got)
	}
	plain := f.create(t, job.Spec{})
	vals, err := f.c.Workspace.Secrets.ForRun(ctx, r.ID)
	if err != nil || len(vals) != 1 || vals["hf_token"] != value {
		t.Fatalf("run secrets = %v, %v; want hf_token only", vals, err)
	}
	if vals, err := f.c.Workspace.Secrets.ForRun(ctx, plain.ID); err != nil || len(vals) != 0 {
		t.Fatalf("secrets of a job naming none = %v, %v", vals, err)
	}

	list, err := f.c.Workspace.Secrets.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if got := list[0]; got.Name != "hf_token" || !equal(got.UsedBy, []string{r.ID}) || got.LastUsedBy != r.ID {
		t.Fatalf("hf_token info = %+v", got)
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), value) {
		t.Fatalf("the list holds the value: %s", b)
	}

	// Deleted after submit: the run is told which variable lost its secret.
	used, err := f.c.Workspace.Secrets.Delete(ctx, "hf_token")
	if err != nil || !equal(used, []string{r.ID}) {
		t.Fatalf("delete = %v, %v", used, err)
	}
	_, err = f.c.Workspace.Secrets.ForRun(ctx, r.ID)
	wantKind(t, err, NotFound, "environment_variables.HF_TOKEN", "hf_token was deleted")
	_, err = f.c.Workspace.Secrets.Delete(ctx, "hf_token")
	wantKind(t, err, NotFound)

	// A final run gets nothing.
	if _, err := f.c.Workspace.Secrets.Set(ctx, "hf_token", value, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Cancel(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if st := f.run(t, r.ID).Status; !st.Terminal() {
		t.Fatalf("run is %s after cancel", st)
	}
	_, err = f.c.Workspace.Secrets.ForRun(ctx, r.ID)
	wantKind(t, err, Conflict, "no longer given out")
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// sshTarget stores an SSH target whose password and key are sealed by the controller's box.
func sshTarget(t *testing.T, f *fixture) {
	t.Helper()
	s := compute.Spec{Name: "vm", Type: compute.TypeSSH, SSH: &compute.SSHSpec{SSHHost: compute.SSHHost{
		Host: "10.0.0.4", AdminUsername: "u", AdminPassword: "pw-1", PrivateKey: "-----BEGIN KEY-----"}}}
	if err := f.c.Workspace.Seal(&s); err != nil {
		t.Fatal(err)
	}
	props, _ := json.Marshal(compute.Stored{Spec: s})
	if err := f.c.Store.Cluster.PutCompute(t.Context(), compute.Target{Name: "vm", Type: compute.TypeSSH, Properties: props, CreatedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
}

// checkUnsealed fails unless the target's credentials and the secret open with box.
func checkUnsealed(t *testing.T, f *fixture, box *secrets.Box) {
	t.Helper()
	tg, err := f.c.Store.Cluster.Compute(t.Context(), "vm")
	if err != nil {
		t.Fatal(err)
	}
	st, err := compute.Unseal(*tg, box)
	if err != nil || st.Spec.SSH.AdminPassword != "pw-1" || st.Spec.SSH.PrivateKey != "-----BEGIN KEY-----" {
		t.Fatalf("unseal the target: %v (%+v)", err, st)
	}
	for _, s := range mustSecrets(t, f) {
		if !box.Current(s.Sealed) {
			t.Fatalf("secret %s not under the current key", s.Name)
		}
	}
}

func mustSecrets(t *testing.T, f *fixture) []struct{ Name, Sealed string } {
	t.Helper()
	list, err := f.c.Store.Assets.JobSecrets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []struct{ Name, Sealed string }
	for _, s := range list {
		out = append(out, struct{ Name, Sealed string }{s.Name, s.Sealed})
	}
	return out
}

func TestRotateKeyResealsSecretsAndComputeCredentials(t *testing.T) {
	f, path := newSecretFixture(t)
	ctx := t.Context()
	sshTarget(t, f)
	if _, err := f.c.Workspace.Secrets.Set(ctx, "tok", "v-1", nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	reply, err := f.c.Workspace.Secrets.RotateKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Resealed != 2 { // the secret and the target
		t.Fatalf("resealed %d values, want 2", reply.Resealed)
	}
	after, _ := os.ReadFile(path)
	if string(before) == string(after) {
		t.Fatal("the key file did not change")
	}
	// A restarted server has only the new key, and every value opens with it.
	box, err := secrets.OpenBox(path)
	if err != nil {
		t.Fatal(err)
	}
	checkUnsealed(t, f, box)
	f.c.Secrets = box
	f.c.Workspace.Sealer = f.c.Secrets
	r := f.create(t, job.Spec{EnvironmentVariables: map[string]string{"T": "${{secrets.tok}}"}})
	if vals, err := f.c.Workspace.Secrets.ForRun(ctx, r.ID); err != nil || vals["tok"] != "v-1" {
		t.Fatalf("after rotation the run gets %v, %v", vals, err)
	}
}

// A crash after the new key was written (before, or after, the values were resealed) loses
// nothing: the next start finishes the rotation.
func TestKeyRotationInterruptedIsFinishedAtStart(t *testing.T) {
	for _, resealed := range []bool{false, true} {
		t.Run(map[bool]string{false: "before reseal", true: "after reseal"}[resealed], func(t *testing.T) {
			f, path := newSecretFixture(t)
			ctx := t.Context()
			sshTarget(t, f)
			if _, err := f.c.Workspace.Secrets.Set(ctx, "tok", "v-1", nil); err != nil {
				t.Fatal(err)
			}
			box := f.c.Secrets.(*secrets.Box)
			if err := box.BeginRotation(); err != nil {
				t.Fatal(err)
			}
			if resealed {
				if _, err := f.c.Store.Assets.Reseal(ctx, workspace.Resealer(box)); err != nil {
					t.Fatal(err)
				}
			}
			// The crash: a new box from the files on disk, as the restarted server opens it.
			restarted, err := secrets.OpenBox(path)
			if err != nil {
				t.Fatal(err)
			}
			if !restarted.Rotating() {
				t.Fatal("the restarted box does not see the rotation")
			}
			f.c.Secrets = restarted
			f.c.Workspace.Sealer = f.c.Secrets
			if err := f.c.Workspace.Secrets.FinishKeyRotation(ctx); err != nil {
				t.Fatal(err)
			}
			if restarted.Rotating() {
				t.Fatal("the rotation was not finished")
			}
			again, err := secrets.OpenBox(path)
			if err != nil {
				t.Fatal(err)
			}
			checkUnsealed(t, f, again)
		})
	}
}
