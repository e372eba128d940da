package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// Data assets share the versioned-asset queries with models: the next integer (archived ones
// counted), conflicts, @latest skipping archived versions, and everything after a reopen.
func TestDataVersions(t *testing.T) {
	path := testDSN(t)
	ctx := t.Context()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	mk := func(version string) (*dataset.Version, error) {
		return s.Assets.CreateData(ctx, dataset.Version{Name: "iris", Version: version, Type: dataset.MLTable, Manifest: "m1",
			Path: "azureml://datastores/workspaceblobstore/paths/LocalUpload/x/iris", Source: dataset.SourceLocal,
			Meta: asset.Meta{Tags: map[string]string{"k": "v"}}, Files: 2, Size: 9, CreatedAt: at})
	}
	for _, tt := range []struct {
		version, want string
		err           error
	}{{"", "1", nil}, {"", "2", nil}, {"2", "", ErrExists}, {"5", "5", nil}} {
		got, err := mk(tt.version)
		if !errors.Is(err, tt.err) || (err == nil && got.Version != tt.want) {
			t.Errorf("create iris:%s = %+v, %v; want %q, %v", tt.version, got, err, tt.want, tt.err)
		}
	}
	if n, err := s.Assets.SetDataArchived(ctx, "iris", "5", true); err != nil || n != 1 {
		t.Fatalf("archive 5 = %d, %v", n, err)
	}
	if next, err := mk(""); err != nil || next.Version != "6" {
		t.Errorf("next after an archived 5 = %+v, %v; want 6", next, err)
	}
	if _, err := s.Assets.SetDataArchived(ctx, "iris", "6", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.SetDataArchived(ctx, "ghost", "", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("archive ghost = %v, want ErrNotFound", err)
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Assets.Data(ctx, "iris", "latest")
	want := &dataset.Version{Name: "iris", Version: "2", Type: dataset.MLTable, Manifest: "m1",
		Path: "azureml://datastores/workspaceblobstore/paths/LocalUpload/x/iris", Source: dataset.SourceLocal,
		Meta: asset.Meta{Tags: map[string]string{"k": "v"}}, Files: 2, Size: 9, CreatedAt: at}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("iris@latest after a reopen (-want +got):\n%s", diff)
	}
	if a, err := s.Assets.Data(ctx, "iris", "5"); err != nil || !a.Archived {
		t.Errorf("iris:5 = %+v, %v; want it archived and readable", a, err)
	}
	all, err := s.Assets.DataVersions(ctx, "")
	if err != nil || len(all) != 4 {
		t.Errorf("DataVersions = %d versions, %v; want 4", len(all), err)
	}
	if models, err := s.Assets.Models(ctx, ""); err != nil || len(models) != 0 {
		t.Errorf("data versions leaked into models: %+v, %v", models, err)
	}
}

func TestDatastoresAndPaths(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	d := datastore.Datastore{Name: "nfs", Type: datastore.TypeLocalFolder, Path: "/shared", Computes: []string{"local"}, CreatedAt: at}
	if err := s.Assets.PutDatastore(ctx, d, ""); err != nil {
		t.Fatal(err)
	}
	d.Path = "/shared2"
	if err := s.Assets.PutDatastore(ctx, d, ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.Assets.Datastore(ctx, "nfs")
	if err != nil || !cmp.Equal(&d, got) {
		t.Errorf("Datastore(nfs) = %+v, %v; want %+v", got, err, d)
	}
	if _, err := s.Assets.Datastore(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Datastore(ghost) = %v", err)
	}
	if all, err := s.Assets.Datastores(ctx); err != nil || len(all) != 1 {
		t.Errorf("Datastores = %+v, %v", all, err)
	}
	ws := datastore.WorkspaceBlobStore
	for _, e := range []datastore.Entry{
		{Datastore: ws, Path: "a", Manifest: "m1", CreatedAt: at},
		{Datastore: ws, Path: "a/b", Run: "job1", Output: "o", CreatedAt: at},
		{Datastore: ws, Path: "a/b", Manifest: "m2", CreatedAt: at.Add(time.Second)},
		{Datastore: "other", Path: "a", Manifest: "m3", CreatedAt: at},
	} {
		if err := s.Assets.PutDatastorePath(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	es, err := s.Assets.DatastorePaths(ctx, ws, datastore.Prefixes("a/b/c"))
	if err != nil {
		t.Fatal(err)
	}
	e, sub, ok := datastore.Find(es, "a/b/c")
	if len(es) != 2 || !ok || e.Manifest != "m2" || e.Run != "" || sub != "c" {
		t.Errorf("entries %+v; found %+v %q %v; want a/b rewritten as m2", es, e, sub, ok)
	}
}

// Migrations are applied by number, each one not yet recorded, not "everything above the
// highest": two written in parallel on branches may land in either order, and a number filled
// in later must still be applied. Simulated with 0013 (tables no later migration changes):
// forgotten, then re-applied.
func TestMigrationBelowTheNewestIsApplied(t *testing.T) {
	ctx := t.Context()
	path := testDSN(t)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TABLE batch_deployments`, `DROP TABLE batch_endpoints`, `DELETE FROM goose_db_version WHERE version_id = 13`} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Serving.BatchEndpoints(ctx); err != nil {
		t.Errorf("batch endpoints after re-applying 0013 under a newer schema: %v", err)
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v != LatestSchema() || v < 15 {
		t.Errorf("SchemaVersion = %d, %v; want %d (>= 15)", v, err, LatestSchema())
	}
}

// An object-store datastore's credentials are stored sealed apart from its spec: never in what
// Datastore and Datastores answer, replaced with the datastore, gone with it; the last run that
// fetched them is recorded.
func TestDatastoreCredentials(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	d := datastore.Datastore{Name: "s3ds", Type: datastore.TypeS3, Bucket: "b", CredentialKind: "access_key", CreatedAt: at}
	if err := s.Assets.PutDatastore(ctx, d, "sealed-1"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Assets.DatastoreCredentials(ctx, "s3ds"); err != nil || got != "sealed-1" {
		t.Fatalf("DatastoreCredentials = %q, %v", got, err)
	}
	if got, err := s.Assets.Datastore(ctx, "s3ds"); err != nil || !cmp.Equal(&d, got) {
		t.Errorf("Datastore = %+v, %v; want %+v", got, err, d)
	}
	used := at.Add(time.Hour)
	if err := s.Assets.MarkDatastoresUsed(ctx, []string{"s3ds", "ghost"}, "run-1", used); err != nil {
		t.Fatal(err)
	}
	got, err := s.Assets.Datastore(ctx, "s3ds")
	if err != nil || got.LastUsedBy != "run-1" || !got.LastUsedAt.Equal(used) {
		t.Errorf("after use: %+v, %v", got, err)
	}
	d.CredentialKind = ""
	if err := s.Assets.PutDatastore(ctx, d, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Assets.DatastoreCredentials(ctx, "s3ds"); err != nil || got != "" {
		t.Errorf("replaced without credentials: %q, %v", got, err)
	}
	if got, err := s.Assets.Datastore(ctx, "s3ds"); err != nil || got.LastUsedBy != "run-1" {
		t.Errorf("a replace keeps the last use: %+v, %v", got, err)
	}
	if err := s.Assets.DeleteDatastore(ctx, "s3ds"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.DatastoreCredentials(ctx, "s3ds"); !errors.Is(err, ErrNotFound) {
		t.Errorf("credentials of a deleted datastore: %v", err)
	}
	if err := s.Assets.DeleteDatastore(ctx, "s3ds"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete again = %v", err)
	}
}
