package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/secrets"
	"github.com/hangar-ml/hangar/internal/store"
)

const (
	s3Secret   = "s3-secret-9c1f0a"
	blobSecret = "account-key-77ab21"
)

// fakeRuns answers the runs of a map.
type fakeRuns map[string]*job.Run

func (f fakeRuns) Run(_ context.Context, id string) (*job.Run, error) {
	if r, ok := f[id]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
}

func (f fakeRuns) List(context.Context, store.RunFilter) ([]*job.Run, error) { return nil, nil }

// datastoreWorkspace is a workspace over a real store whose sealer is a key file's box, with
// datastores s3ds (S3 keys), blob (an account key) and ambient (no credentials).
func datastoreWorkspace(t *testing.T, runs fakeRuns) (*Workspace, *store.Store, *secrets.Box) {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "workspace.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	box, err := secrets.OpenBox(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	w := New(Deps{Store: Store{Assets: st.Assets, Runs: runs}, Sealer: box,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return at }})
	ctx := t.Context()
	for _, c := range []struct {
		d     datastore.Datastore
		creds *datastore.Credentials
	}{
		{datastore.Datastore{Name: "s3ds", Type: datastore.TypeS3, Bucket: "data", EndpointURL: "http://127.0.0.1:7070", Region: "us-east-1"},
			&datastore.Credentials{AccessKeyID: "AKID", SecretAccessKey: s3Secret}},
		{datastore.Datastore{Name: "blob", Type: datastore.TypeAzureBlob, AccountName: "devstoreaccount1", ContainerName: "data",
			Endpoint: "http://127.0.0.1:10000/devstoreaccount1"}, &datastore.Credentials{AccountKey: blobSecret}},
		{datastore.Datastore{Name: "ambient", Type: datastore.TypeGCS, Bucket: "data"}, nil},
	} {
		if _, err := w.Datastores.Create(ctx, c.d, c.creds); err != nil {
			t.Fatalf("create %s: %v", c.d.Name, err)
		}
	}
	return w, st, box
}

func storeRun(id string, status job.State, inputs map[string]string, outputs map[string]string) *job.Run {
	sp := job.Spec{Name: id, Inputs: map[string]job.Input{}, Outputs: map[string]job.Output{}}
	for name, ds := range inputs {
		sp.Inputs[name] = job.Input{Type: job.URIFolder, Store: &datastore.Location{Datastore: ds, Type: datastore.TypeS3, Container: "data"}}
	}
	for name, ds := range outputs {
		sp.Outputs[name] = job.Output{Type: job.URIFolder, Store: &datastore.Location{Datastore: ds, Type: datastore.TypeS3, Container: "data"}}
	}
	sp.Inputs["plain"] = job.Input{Type: job.URIFolder, Manifest: "m"}
	return &job.Run{ID: id, Status: status, Spec: sp}
}

// A live run gets the credentials of exactly the datastores its inputs and outputs name, each
// once, a datastore without credentials as the zero value; the fetch is recorded.
func TestCredentialsForRun(t *testing.T) {
	runs := fakeRuns{
		"r1":   storeRun("r1", job.Running, map[string]string{"a": "s3ds", "b": "s3ds"}, map[string]string{"o": "ambient"}),
		"r2":   storeRun("r2", job.Preparing, map[string]string{"a": "blob"}, nil),
		"none": storeRun("none", job.Running, nil, nil),
		"done": storeRun("done", job.Completed, map[string]string{"a": "s3ds"}, nil),
		"gone": storeRun("gone", job.Running, map[string]string{"a": "deleted"}, nil),
	}
	w, _, _ := datastoreWorkspace(t, runs)
	ctx := t.Context()
	got, err := w.Datastores.CredentialsForRun(ctx, "r1")
	want := map[string]datastore.Credentials{"s3ds": {AccessKeyID: "AKID", SecretAccessKey: s3Secret}, "ambient": {}}
	if err != nil || !cmp.Equal(got, want) {
		t.Fatalf("r1's credentials = %+v, %v; want %+v", got, err, want)
	}
	if got, err := w.Datastores.CredentialsForRun(ctx, "r2"); err != nil || len(got) != 1 || got["blob"].AccountKey != blobSecret {
		t.Fatalf("r2's credentials = %+v, %v", got, err)
	}
	if got, err := w.Datastores.CredentialsForRun(ctx, "none"); err != nil || len(got) != 0 {
		t.Fatalf("a run naming no datastore = %+v, %v", got, err)
	}
	var we *Error
	if _, err := w.Datastores.CredentialsForRun(ctx, "done"); !errors.As(err, &we) || we.Kind != Conflict || !strings.Contains(err.Error(), "run done is Completed") {
		t.Errorf("a finished run = %v; want a conflict", err)
	}
	if _, err := w.Datastores.CredentialsForRun(ctx, "gone"); !errors.As(err, &we) || we.Kind != NotFound || !strings.Contains(err.Error(), "datastore deleted was deleted") {
		t.Errorf("a deleted datastore = %v", err)
	}
	if _, err := w.Datastores.CredentialsForRun(ctx, "ghost"); !errors.As(err, &we) || we.Kind != NotFound {
		t.Errorf("an unknown run = %v", err)
	}
	d, err := w.Datastores.Get(ctx, "s3ds")
	if err != nil || d.LastUsedBy != "r1" || d.LastUsedAt.IsZero() {
		t.Errorf("s3ds after r1's fetch = %+v, %v", d, err)
	}
}

// Credentials are sealed at rest, never in what list and show answer (only their kind), and
// still open after the key's rotation; a replace without credentials drops them.
func TestDatastoreCredentialsSealedNeverShown(t *testing.T) {
	runs := fakeRuns{"r": storeRun("r", job.Running, map[string]string{"a": "s3ds", "b": "blob"}, nil)}
	w, st, box := datastoreWorkspace(t, runs)
	ctx := t.Context()
	sealed, err := st.Assets.DatastoreCredentials(ctx, "s3ds")
	if err != nil || sealed == "" || strings.Contains(sealed, s3Secret) {
		t.Fatalf("sealed = %q, %v", sealed, err)
	}
	all, err := w.Datastores.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(all)
	if strings.Contains(string(b), s3Secret) || strings.Contains(string(b), blobSecret) || strings.Contains(string(b), "AKID") {
		t.Fatalf("list holds a credential: %s", b)
	}
	kinds := map[string]string{}
	for _, d := range all {
		kinds[d.Name] = d.CredentialKind
	}
	if want := map[string]string{"workspaceblobstore": "", "s3ds": "access_key", "blob": "account_key", "ambient": ""}; !cmp.Equal(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
	reply, err := w.Secrets.RotateKey(ctx)
	if err != nil || reply.Resealed != 2 {
		t.Fatalf("rotate = %+v, %v; want the two datastores' credentials resealed", reply, err)
	}
	after, _ := st.Assets.DatastoreCredentials(ctx, "s3ds")
	if after == sealed || !box.Current(after) {
		t.Errorf("s3ds's credentials not resealed under the new key")
	}
	if got, err := w.Datastores.CredentialsForRun(ctx, "r"); err != nil || got["s3ds"].SecretAccessKey != s3Secret || got["blob"].AccountKey != blobSecret {
		t.Fatalf("after the rotation: %+v, %v", got, err)
	}
	if _, err := w.Datastores.Create(ctx, datastore.Datastore{Name: "s3ds", Type: datastore.TypeS3, Bucket: "data"}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := w.Datastores.CredentialsForRun(ctx, "r"); err != nil || got["s3ds"] != (datastore.Credentials{}) {
		t.Errorf("replaced without credentials: %+v, %v", got, err)
	}
}

// Create refuses what Check and CheckCredentials refuse, naming the field, never a value.
func TestCreateDatastoreRefused(t *testing.T) {
	w, _, _ := datastoreWorkspace(t, fakeRuns{})
	ctx := t.Context()
	for _, tt := range []struct {
		d      datastore.Datastore
		creds  *datastore.Credentials
		errHas string
	}{
		{datastore.Datastore{Name: "f", Type: datastore.TypeAzureFile}, nil, "type azure_file: an Azure file share"},
		{datastore.Datastore{Name: "s", Type: datastore.TypeS3, Bucket: "bkt"}, &datastore.Credentials{AccountKey: s3Secret}, "credentials.account_key: not a credential of a s3 datastore"},
		{datastore.Datastore{Name: "s", Type: datastore.TypeS3, Bucket: "bkt"}, &datastore.Credentials{AccessKeyID: "AKID"}, "needs access_key_id and secret_access_key"},
		{datastore.Datastore{Name: "l", Type: datastore.TypeLocalFolder, Path: "/x"}, &datastore.Credentials{AccountKey: s3Secret}, "credentials: a local_folder datastore has no credentials"},
		{datastore.Datastore{Name: "b", Type: datastore.TypeAzureBlob, AccountName: "acct1", ContainerName: "c1", Bucket: "x"}, nil, "bucket: not a field of a azure_blob datastore"},
	} {
		_, err := w.Datastores.Create(ctx, tt.d, tt.creds)
		var we *Error
		if !errors.As(err, &we) || we.Kind != Invalid || !strings.Contains(err.Error(), tt.errHas) || strings.Contains(err.Error(), s3Secret) {
			t.Errorf("create %+v = %v; want invalid with %q", tt.d, err, tt.errHas)
		}
	}
	if _, err := w.Datastores.Delete(ctx, datastore.WorkspaceBlobStore); err == nil {
		t.Error("deleted workspaceblobstore")
	}
	if _, err := w.Datastores.Delete(ctx, "s3ds"); err != nil {
		t.Fatal(err)
	}
	var we *Error
	if _, err := w.Datastores.Delete(ctx, "s3ds"); !errors.As(err, &we) || we.Kind != NotFound {
		t.Errorf("delete again = %v", err)
	}
}
