package store

import (
	"errors"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/model"
)

// A registered model without versions is stored once; a name taken by a row or by a version is
// ErrExists; the list reads them back by name.
func TestRegisteredModels(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	if _, err := s.Assets.CreateModel(ctx, model.Version{Name: "mnist", Manifest: "m", Source: model.SourceLocal, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		wantErr error
	}{{"iris", nil}, {"alpha", nil}, {"iris", ErrExists}, {"mnist", ErrExists}} {
		err := s.Assets.CreateRegisteredModel(ctx, RegisteredModel{Name: tc.name, Description: "d-" + tc.name, Created: at}, nil)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("create %s = %v, want %v", tc.name, err, tc.wantErr)
		}
	}
	all, err := s.Assets.RegisteredModels(ctx, "")
	if err != nil || len(all) != 2 || all[0].Name != "alpha" || all[1] != (RegisteredModel{Name: "iris", Description: "d-iris", Created: at}) {
		t.Errorf("list = %+v, %v", all, err)
	}
	if one, err := s.Assets.RegisteredModels(ctx, "iris"); err != nil || len(one) != 1 {
		t.Errorf("list iris = %+v, %v", one, err)
	}
	if none, err := s.Assets.RegisteredModels(ctx, "mnist"); err != nil || len(none) != 0 {
		t.Errorf("list mnist = %+v, %v", none, err)
	}
}

// A version's description and tags change in place, the rest of it kept; a registered model's
// description is set with or without its row.
func TestModelMetaUpdates(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	if _, err := s.Assets.CreateModel(ctx, model.Version{Name: "mnist", Manifest: "m", Source: model.SourceLocal, Files: 3, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	v, err := s.Assets.UpdateModelMeta(ctx, "mnist", "1", func(m *asset.Meta) {
		m.Description = "digits"
		m.Tags = map[string]string{"k": "v"}
	})
	if err != nil || v.Description != "digits" || v.Tags["k"] != "v" || v.Files != 3 || v.Manifest != "m" {
		t.Fatalf("update = %+v, %v", v, err)
	}
	if got, err := s.Assets.Model(ctx, "mnist", "1"); err != nil || got.Description != "digits" || got.Tags["k"] != "v" || !got.CreatedAt.Equal(at) {
		t.Errorf("read back = %+v, %v", got, err)
	}
	if _, err := s.Assets.UpdateModelMeta(ctx, "mnist", "9", func(*asset.Meta) {}); !errors.Is(err, ErrNotFound) {
		t.Errorf("update a missing version = %v, want ErrNotFound", err)
	}
	for _, d := range []string{"first", "second"} {
		if err := s.Assets.SetRegisteredModelDescription(ctx, "mnist", d, at); err != nil {
			t.Fatal(err)
		}
	}
	if rows, err := s.Assets.RegisteredModels(ctx, "mnist"); err != nil || len(rows) != 1 || rows[0].Description != "second" {
		t.Errorf("registered model after two descriptions = %+v, %v", rows, err)
	}
}

// addVersions registers versions 1..n of each name, as `hangar model create` does.
func addVersions(t *testing.T, s *Store, n int, names ...string) {
	t.Helper()
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	for _, name := range names {
		for i := range n {
			if _, err := s.Assets.CreateModel(t.Context(), model.Version{Name: name, Manifest: "m", Source: model.SourceLocal, CreatedAt: at.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// An alias points at one version, moves when set again, and goes when deleted (twice is fine);
// it may only name a version that is there, of a model that is.
func TestModelAliases(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	addVersions(t, s, 3, "iris", "mnist")
	for _, a := range []ModelAlias{{"iris", "champion", "1"}, {"iris", "challenger", "2"}, {"iris", "champion", "3"}, {"mnist", "champion", "1"}} {
		if err := s.Assets.SetModelAlias(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Assets.ModelAliases(ctx, "iris")
	if err != nil || len(got) != 2 || got[0] != (ModelAlias{"iris", "challenger", "2"}) || got[1] != (ModelAlias{"iris", "champion", "3"}) {
		t.Errorf("iris aliases = %+v, %v", got, err)
	}
	if v, err := s.Assets.Model(ctx, "iris", "3"); err != nil || len(v.Aliases) != 1 || v.Aliases[0] != "champion" {
		t.Errorf("iris:3 = %+v, %v; want its alias champion", v, err)
	}
	for range 2 {
		if err := s.Assets.DeleteModelAlias(ctx, "iris", "challenger"); err != nil {
			t.Fatal(err)
		}
	}
	if all, err := s.Assets.ModelAliases(ctx, ""); err != nil || len(all) != 2 {
		t.Errorf("every alias = %+v, %v", all, err)
	}
	if err := s.Assets.SetModelAlias(ctx, ModelAlias{"iris", "x", "9"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("alias to a missing version = %v, want ErrNotFound", err)
	}
	if err := s.Assets.DeleteModelAlias(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) || err.Error() != "Registered Model with name=nope not found: not found" {
		t.Errorf("alias of a missing model = %v, want MLflow's ErrNotFound", err)
	}
}

// A registered model's tags: set (a key's value replaced), listed, deleted (twice is fine);
// created with the model in one write; a model that is not there has none.
func TestRegisteredModelTags(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	addVersions(t, s, 1, "mnist")
	if err := s.Assets.CreateRegisteredModel(ctx, RegisteredModel{Name: "iris", Created: at}, []RegisteredModelTag{{"iris", "team", "a"}, {"iris", "task", "cls"}}); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []RegisteredModelTag{{"mnist", "team", "b"}, {"iris", "team", "vision"}} {
		if err := s.Assets.SetRegisteredModelTag(ctx, tag); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := s.Assets.DeleteRegisteredModelTag(ctx, "iris", "task"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Assets.RegisteredModelTags(ctx, "iris")
	if err != nil || len(got) != 1 || got[0] != (RegisteredModelTag{"iris", "team", "vision"}) {
		t.Errorf("iris tags = %+v, %v", got, err)
	}
	if all, err := s.Assets.RegisteredModelTags(ctx, ""); err != nil || len(all) != 2 {
		t.Errorf("every tag = %+v, %v", all, err)
	}
	if err := s.Assets.SetRegisteredModelTag(ctx, RegisteredModelTag{"nope", "k", "v"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("tag of a missing model = %v, want ErrNotFound", err)
	}
	// A create refused (the name is taken) writes none of its tags.
	if err := s.Assets.CreateRegisteredModel(ctx, RegisteredModel{Name: "mnist", Created: at}, []RegisteredModelTag{{"mnist", "x", "y"}}); !errors.Is(err, ErrExists) {
		t.Fatalf("create mnist again = %v", err)
	}
	if got, _ := s.Assets.RegisteredModelTags(ctx, "mnist"); len(got) != 1 {
		t.Errorf("mnist tags after a refused create = %+v", got)
	}
}
