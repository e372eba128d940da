package controller

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/secrets"
)

// newImportFixture is a fixture whose workspace seals, with a postgresql connection sales_db.
func newImportFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	box, err := secrets.OpenBox(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	f.c.Workspace.Sealer = box
	if _, err := f.c.Workspace.Connections.Create(t.Context(), api.CreateConnectionRequest{
		Connection:  connection.Connection{Name: "sales_db", Type: connection.TypePostgreSQL, Target: "postgresql://db/sales"},
		Credentials: connection.Credentials{Type: connection.CredUsernamePassword, Username: "u", Password: "p"}}); err != nil {
		t.Fatal(err)
	}
	return f
}

// startImport queues an import of orders and takes its run to Running with its output sink
// registered (files: the output's files).
func (f *fixture) startImport(t *testing.T, files map[string]string) *job.Run {
	t.Helper()
	r, err := f.c.Imports.Create(t.Context(), api.DataImportRequest{Spec: dataset.ImportSpec{Name: "orders", Type: dataset.MLTable,
		Path:   "azureml://datastores/workspaceblobstore/paths/pg/${{name}}",
		Source: dataset.ImportSource{Type: dataset.SourceDatabase, Query: "select * from orders", Connection: "sales_db"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	f.report(t, r.ID, job.Preparing)
	f.report(t, r.ID, job.Running)
	if _, err := f.c.RegisterArtifacts(t.Context(), r.ID, api.ArtifactsReport{Artifacts: putTree(t, f, map[string]string{"user_logs/std_log.txt": "log"}),
		NamedOutputs: map[string]string{job.ImportOutput: putTree(t, f, files)}}); err != nil {
		t.Fatal(err)
	}
	return f.run(t, r.ID)
}

var table = map[string]string{"MLTable": "paths:\n  - file: ./data.csv\n", "data.csv": "id\n1\n"}

// A completing import registers its version once: a registration that happened before a crash
// (or a retried report) is found and kept, not made twice, and the run completes.
func TestImportRegistersItsVersionOnce(t *testing.T) {
	f := newImportFixture(t)
	ctx := t.Context()
	r := f.startImport(t, table)
	if r.Spec.Import.Version != "1" {
		t.Fatalf("version = %q", r.Spec.Import.Version)
	}
	// The registration done once already, the run's end not recorded (a crash in between).
	if _, err := f.c.Workspace.Data.RegisterImport(ctx, r); err != nil {
		t.Fatal(err)
	}
	f.report(t, r.ID, job.Completed)
	f.report(t, r.ID, job.Completed) // the supervisor's retry of the same report
	if got := f.run(t, r.ID); got.Status != job.Completed {
		t.Fatalf("import ended %s: %s", got.Status, got.StatusReason)
	}
	vs, err := f.c.Store.Assets.DataVersions(ctx, "orders")
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions = %+v, %v; want one", vs, err)
	}
	v := vs[0]
	if v.Version != "1" || v.Import == nil || v.Import.Job != r.ID || v.Import.Connection != "sales_db" || v.Files != 2 ||
		v.Path != "azureml://datastores/workspaceblobstore/paths/pg/orders" {
		t.Fatalf("version = %+v (import %+v)", v, v.Import)
	}
}

// An import whose version cannot be registered fails, saying why; the data is not registered.
func TestImportThatCannotRegisterFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string
		before func(t *testing.T, f *fixture)
		want   string
	}{
		{"no MLTable", map[string]string{"data.csv": "id\n1\n"}, nil, "has no MLTable file"},
		{"version taken meanwhile", table, func(t *testing.T, f *fixture) {
			h := putTree(t, f, table)
			if _, err := f.c.Workspace.Data.Create(t.Context(), api.CreateDataRequest{Spec: dataset.Spec{Name: "orders", Version: "1",
				Type: dataset.MLTable, Path: "/c/t"}, Manifest: h}); err != nil {
				t.Fatal(err)
			}
		}, "data asset orders version 1 was registered by someone else meanwhile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newImportFixture(t)
			r := f.startImport(t, tc.files)
			if tc.before != nil {
				tc.before(t, f)
			}
			f.report(t, r.ID, job.Completed)
			got := f.run(t, r.ID)
			if got.Status != job.Failed || !strings.Contains(got.StatusReason, "registering the imported data: ") ||
				!strings.Contains(got.StatusReason, tc.want) {
				t.Fatalf("import ended %s: %s; want Failed with %q", got.Status, got.StatusReason, tc.want)
			}
		})
	}
}
