package store

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/serving"
)

func TestJobSecretsPutListDelete(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	t0 := time.Unix(100, 0).UTC()
	created, err := s.Assets.PutJobSecret(ctx, "hf_token", "sealed-1", nil, t0)
	if err != nil || !created {
		t.Fatalf("put = %v, %v", created, err)
	}
	created, err = s.Assets.PutJobSecret(ctx, "hf_token", "sealed-2", nil, t0.Add(time.Minute))
	if err != nil || created {
		t.Fatalf("replace = %v, %v", created, err)
	}
	if err := s.Assets.MarkJobSecretsUsed(ctx, []string{"hf_token"}, "run-1", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	list, err := s.Assets.JobSecrets(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	got := list[0]
	if got.Sealed != "sealed-2" || !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0.Add(time.Minute)) ||
		got.LastUsedRun != "run-1" || !got.LastUsedAt.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("secret = %+v", got)
	}
	if err := s.Assets.DeleteJobSecret(ctx, "hf_token"); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.DeleteJobSecret(ctx, "hf_token"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete again = %v", err)
	}
}

// Who may use a secret is stored with it: set with its value (in one transaction), kept when
// the value alone is replaced, replaced alone, and emptied.
func TestJobSecretAccess(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	now := time.Unix(100, 0).UTC()
	limited := SecretAccess{Users: []string{"rita"}, Roles: []string{"contributor"}}
	access := func() SecretAccess {
		t.Helper()
		list, err := s.Assets.JobSecrets(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("list = %+v, %v", list, err)
		}
		return list[0].Access
	}
	if _, err := s.Assets.PutJobSecret(ctx, "db", "sealed-1", &limited, now); err != nil {
		t.Fatal(err)
	}
	if got := access(); !slices.Equal(got.Users, limited.Users) || !slices.Equal(got.Roles, limited.Roles) {
		t.Errorf("access after create = %+v, want %+v", got, limited)
	}
	if _, err := s.Assets.PutJobSecret(ctx, "db", "sealed-2", nil, now); err != nil {
		t.Fatal(err)
	}
	if got := access(); !slices.Equal(got.Users, limited.Users) {
		t.Errorf("access after the value alone changed = %+v, want it kept", got)
	}
	if err := s.Assets.SetJobSecretAccess(ctx, "db", SecretAccess{Roles: []string{"owner"}}); err != nil {
		t.Fatal(err)
	}
	if got := access(); got.Users != nil || !slices.Equal(got.Roles, []string{"owner"}) {
		t.Errorf("access after it was replaced = %+v", got)
	}
	if err := s.Assets.SetJobSecretAccess(ctx, "db", SecretAccess{}); err != nil {
		t.Fatal(err)
	}
	if got := access(); got.Users != nil || got.Roles != nil {
		t.Errorf("access after it was emptied = %+v", got)
	}
	if err := s.Assets.SetJobSecretAccess(ctx, "nope", SecretAccess{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("access of a missing secret = %v, want ErrNotFound", err)
	}
}

// Reseal rewrites every sealed value in one transaction: when one value fails, none changed.
func TestResealIsAllOrNothing(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	for _, n := range []string{"a", "b"} {
		if _, err := s.Assets.PutJobSecret(ctx, n, "old:"+n, nil, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Serving.PutEndpoint(ctx, EndpointRecord{Spec: serving.Endpoint{Name: "ep"}, Keys: "old:keys", CreatedAt: now, UpdatedAt: now}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.PutCompute(ctx, compute.Target{Name: "vm", Type: compute.TypeSSH, Properties: []byte(`{"k":"old:pw"}`), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.PutDatastore(ctx, datastore.Datastore{Name: "s3ds", Type: datastore.TypeS3, Bucket: "b", CreatedAt: now}, "old:ds"); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.PutDatastore(ctx, datastore.Datastore{Name: "ambient", Type: datastore.TypeS3, Bucket: "b", CreatedAt: now}, ""); err != nil {
		t.Fatal(err)
	}
	value := func(v string) (string, bool, error) {
		if rest, ok := strings.CutPrefix(v, "old:"); ok {
			return "new:" + rest, true, nil
		}
		return v, false, nil
	}
	comp := func(t compute.Target) ([]byte, bool, error) {
		p := string(t.Properties)
		if strings.Contains(p, "old:") {
			return []byte(strings.ReplaceAll(p, "old:", "new:")), true, nil
		}
		return t.Properties, false, nil
	}
	failing := Resealer{Value: func(v string) (string, bool, error) {
		if v == "old:b" {
			return "", false, errors.New("cannot open")
		}
		return value(v)
	}, Compute: comp}
	if _, err := s.Assets.Reseal(ctx, failing); err == nil || !strings.Contains(err.Error(), "job_secrets b") {
		t.Fatalf("failing reseal = %v", err)
	}
	if list, _ := s.Assets.JobSecrets(ctx); list[0].Sealed != "old:a" {
		t.Fatalf("a failed reseal changed %q", list[0].Sealed)
	}
	n, err := s.Assets.Reseal(ctx, Resealer{Value: value, Compute: comp})
	if err != nil || n != 5 {
		t.Fatalf("reseal = %d, %v; want 5 values", n, err)
	}
	if c, err := s.Assets.DatastoreCredentials(ctx, "s3ds"); err != nil || c != "new:ds" {
		t.Fatalf("datastore's credentials after reseal = %q, %v", c, err)
	}
	if c, err := s.Assets.DatastoreCredentials(ctx, "ambient"); err != nil || c != "" {
		t.Fatalf("a datastore without credentials after reseal = %q, %v", c, err)
	}
	list, _ := s.Assets.JobSecrets(ctx)
	ep, _ := s.Serving.Endpoint(ctx, "ep")
	vm, _ := s.Cluster.Compute(ctx, "vm")
	if list[0].Sealed != "new:a" || list[1].Sealed != "new:b" || ep.Keys != "new:keys" || string(vm.Properties) != `{"k":"new:pw"}` {
		t.Fatalf("after reseal: %+v %q %s", list, ep.Keys, vm.Properties)
	}
	if n, err := s.Assets.Reseal(ctx, Resealer{Value: value, Compute: comp}); err != nil || n != 0 {
		t.Fatalf("second reseal = %d, %v; want nothing left", n, err)
	}
}
