package workspace

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
)

// registryWorkspace is a workspace over a real store, with model versions 1..n of each name.
func registryWorkspace(t *testing.T, n int, names ...string) (*Workspace, *store.Store) {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "workspace.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := st.Assets
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	w := New(Deps{Store: Store{Registry: a, Aliases: a,
		Models: VersionRows[model.Version]{Add: a.CreateModel, Get: a.Model, List: a.Models, SetArchived: a.SetModelArchived}},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return at }})
	for _, name := range names {
		for range n {
			if _, err := a.CreateModel(t.Context(), model.Version{Name: name, Manifest: "m", Source: model.SourceLocal, CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return w, st
}

// Every registry write is checked here by MLflow's rules, whoever asks, and its refusals are
// typed errors in MLflow's words.
func TestRegistryWritesRefused(t *testing.T) {
	w, _ := registryWorkspace(t, 2, "iris")
	ctx := t.Context()
	m := w.Models
	tests := []struct {
		name  string
		call  func(ctx context.Context) error
		kind  Kind
		msg   string
		isErr error
	}{
		{"a name Hangar cannot take", func(ctx context.Context) error { return m.CreateRegistered(ctx, "my model", "", nil) },
			Invalid, "Invalid model name 'my model': ", nil},
		{"a taken name", func(ctx context.Context) error { return m.CreateRegistered(ctx, "iris", "", nil) },
			Conflict, "Registered Model (name=iris) already exists.", store.ErrExists},
		{"a tag key MLflow refuses", func(ctx context.Context) error {
			return m.CreateRegistered(ctx, "new", "", map[string]string{"a/../b": "v"})
		},
			Invalid, `Invalid value "a/../b" for parameter 'key' supplied`, nil},
		{"a tag of a model that is not there", func(ctx context.Context) error { return m.SetRegisteredTag(ctx, "ghost", "k", "v") },
			NotFound, "Registered Model with name=ghost not found", store.ErrNotFound},
		{"a version tag's empty key", func(ctx context.Context) error { _, err := m.SetVersionTag(ctx, "iris", "1", "", "v"); return err },
			Invalid, "Missing value for required parameter 'key'", nil},
		{"a version that is not there", func(ctx context.Context) error { _, err := m.DescribeVersion(ctx, "iris", "9", "d"); return err },
			NotFound, "Model Version (name=iris, version=9) not found", nil},
		{"a reserved alias", func(ctx context.Context) error { _, err := m.SetAlias(ctx, "iris", "Latest", "1"); return err },
			Invalid, `alias "Latest": latest (any case) is reserved`, nil},
		{"an alias to a missing version", func(ctx context.Context) error { _, err := m.SetAlias(ctx, "iris", "champion", "7"); return err },
			NotFound, "no model iris:7 in this workspace", nil},
		{"an unknown stage", func(ctx context.Context) error {
			_, err := m.TransitionStage(ctx, "iris", "1", "prod", false)
			return err
		},
			Invalid, "Invalid Model Version stage: prod.", nil},
		{"archiving others from None", func(ctx context.Context) error {
			_, err := m.TransitionStage(ctx, "iris", "1", "none", true)
			return err
		},
			Invalid, "Model version transition cannot archive existing model versions because 'None' is not an Active stage.", nil},
		{"a rename to a bad name", func(ctx context.Context) error { return m.Rename(ctx, "iris", "a/b") }, Invalid, "Invalid model name 'a/b'", nil},
		{"a rename of a missing model", func(ctx context.Context) error { return m.Rename(ctx, "ghost", "b") },
			NotFound, "Registered Model with name=ghost not found", nil},
		{"a delete of a bad version", func(ctx context.Context) error { return m.Delete(ctx, "iris", "x/1") }, Invalid, "", nil},
		{"a delete of a missing version", func(ctx context.Context) error { return m.Delete(ctx, "iris", "9") },
			NotFound, "Model Version (name=iris, version=9) not found", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(ctx)
			var we *Error
			if !errors.As(err, &we) || we.Kind != tt.kind || len(we.Msg) < len(tt.msg) || we.Msg[:len(tt.msg)] != tt.msg {
				t.Fatalf("error %#v, want kind %d starting %q", err, tt.kind, tt.msg)
			}
			if tt.isErr != nil && !errors.Is(err, tt.isErr) {
				t.Errorf("error %v is not %v", err, tt.isErr)
			}
		})
	}
	if vs, _ := m.rows.List(ctx, "iris"); len(vs) != 2 || vs[0].RegistryStage() != model.StageNone || len(vs[0].Aliases) != 0 {
		t.Errorf("iris after refused writes = %+v", vs)
	}
}

// What the registry's writes do, through the workspace: a model created with its tags at once,
// stages moved with archive_existing_versions, a version deleted (gone from references and
// @latest, its number kept), a rename refused while a deployment names the model, then made.
func TestRegistryWrites(t *testing.T) {
	w, st := registryWorkspace(t, 3, "iris")
	ctx := t.Context()
	m := w.Models
	if err := m.CreateRegistered(ctx, "flowers", "petals", map[string]string{"team": "vision", "task": "cls"}); err != nil {
		t.Fatal(err)
	}
	if tags, err := st.Assets.RegisteredModelTags(ctx, "flowers"); err != nil || len(tags) != 2 {
		t.Errorf("flowers tags = %+v, %v", tags, err)
	}
	if _, err := m.TransitionStage(ctx, "iris", "2", "production", false); err != nil {
		t.Fatal(err)
	}
	v, err := m.TransitionStage(ctx, "iris", "3", "PRODUCTION", true)
	if err != nil || v.MLflowStage != model.StageProduction {
		t.Fatalf("transition 3 = %+v, %v", v, err)
	}
	if v2, err := m.Resolve(ctx, "iris:2"); err != nil || v2.RegistryStage() != model.StageArchived {
		t.Errorf("iris:2 after 3 went to Production archiving the others = %+v, %v", v2, err)
	}
	if _, err := m.SetAlias(ctx, "iris", "champion", "3"); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, "iris", "3"); err != nil {
		t.Fatal(err)
	}
	var we *Error
	if _, err := m.Resolve(ctx, "iris:3"); !errors.As(err, &we) || we.Kind != NotFound {
		t.Errorf("resolve a deleted version = %v", err)
	}
	if latest, err := m.Resolve(ctx, "iris@latest"); err != nil || latest.Version != "1" {
		t.Errorf("iris@latest = %+v, %v; want 1 (2 is archived, 3 deleted)", latest, err)
	}
	if v4, err := st.Assets.CreateModel(ctx, model.Version{Name: "iris", Manifest: "m", CreatedAt: w.Now()}); err != nil || v4.Version != "4" {
		t.Errorf("the next iris = %+v, %v; want 4", v4, err)
	}

	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	if err := st.Serving.PutEndpoint(ctx, store.EndpointRecord{Spec: serving.Endpoint{Name: "ep"}, CreatedAt: at, UpdatedAt: at}, true); err != nil {
		t.Fatal(err)
	}
	d := store.DeploymentRecord{Spec: serving.Deployment{Name: "blue", Endpoint: "ep", Model: serving.ModelRef{Ref: "iris@latest"}}, CreatedAt: at, UpdatedAt: at}
	if _, err := st.Serving.PutDeployment(ctx, d, true); err != nil {
		t.Fatal(err)
	}
	err = m.Rename(ctx, "iris", "petals")
	if !errors.As(err, &we) || we.Kind != Conflict || !errors.Is(err, store.ErrInUse) || errors.Is(err, store.ErrExists) {
		t.Fatalf("rename while deployed = %v", err)
	}
	if err := st.Serving.DeleteDeployment(ctx, "ep", "blue"); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename(ctx, "iris", "petals"); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Resolve(ctx, "petals:4"); err != nil || v.Name != "petals" {
		t.Errorf("petals:4 = %+v, %v", v, err)
	}
}
