package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/model"
)

func TestModelVersions(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	mk := func(name, version string) (*model.Version, error) {
		return s.Assets.CreateModel(ctx, model.Version{Name: name, Version: version, Type: model.CustomModel,
			Manifest: "m-" + name, Source: model.SourceLocal, Meta: asset.Meta{Tags: map[string]string{"k": "v"}},
			Files: 2, Size: 9, CreatedAt: at})
	}
	tests := []struct {
		name, version, want string
		wantErr             error
	}{
		{"mnist", "", "1", nil},
		{"mnist", "", "2", nil},
		{"mnist", "7", "7", nil},
		{"mnist", "", "8", nil},
		{"mnist", "7", "", ErrExists},
		{"iris", "", "1", nil},
	}
	for _, tt := range tests {
		got, err := mk(tt.name, tt.version)
		if !errors.Is(err, tt.wantErr) || (err == nil && got.Version != tt.want) {
			t.Errorf("create %s:%s = %+v, %v; want version %q, err %v", tt.name, tt.version, got, err, tt.want, tt.wantErr)
		}
	}
	got, err := s.Assets.Model(ctx, "mnist", "7")
	want := &model.Version{Name: "mnist", Version: "7", Type: model.CustomModel, Manifest: "m-mnist", Source: model.SourceLocal,
		Meta: asset.Meta{Tags: map[string]string{"k": "v"}}, Files: 2, Size: 9, CreatedAt: at}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Model(mnist, 7) (-want +got):\n%s", diff)
	}
	// Archiving the highest version moves @latest to the one below; numbers are not reused.
	if n, err := s.Assets.SetModelArchived(ctx, "mnist", "8", true); err != nil || n != 1 {
		t.Fatalf("archive mnist:8 = %d, %v", n, err)
	}
	if l, err := s.Assets.Model(ctx, "mnist", "latest"); err != nil || l.Version != "7" {
		t.Errorf("latest after archiving 8 = %+v, %v; want 7", l, err)
	}
	if a, err := s.Assets.Model(ctx, "mnist", "8"); err != nil || !a.Archived {
		t.Errorf("mnist:8 = %+v, %v; want it archived and still readable", a, err)
	}
	if next, err := mk("mnist", ""); err != nil || next.Version != "9" {
		t.Errorf("next after an archived 8 = %+v, %v; want 9", next, err)
	}
	if n, err := s.Assets.SetModelArchived(ctx, "iris", "", true); err != nil || n != 1 {
		t.Errorf("archive every iris version = %d, %v", n, err)
	}
	if _, err := s.Assets.Model(ctx, "iris", "latest"); !errors.Is(err, ErrNotFound) {
		t.Errorf("latest of an archived model = %v, want ErrNotFound", err)
	}
	for _, bad := range [][2]string{{"nope", ""}, {"mnist", "99"}, {"mnist", "x"}} {
		if _, err := s.Assets.SetModelArchived(ctx, bad[0], bad[1], true); !errors.Is(err, ErrNotFound) {
			t.Errorf("archive %v = %v, want ErrNotFound", bad, err)
		}
	}
	if _, err := s.Assets.Model(ctx, "mnist", "99"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing version error = %v", err)
	}
	all, err := s.Assets.Models(ctx, "")
	if err != nil || len(all) != 6 {
		t.Errorf("Models() = %d versions, %v; want 6", len(all), err)
	}
	mnist, _ := s.Assets.Models(ctx, "mnist")
	var versions []string
	for _, v := range mnist {
		versions = append(versions, v.Version)
	}
	if diff := cmp.Diff([]string{"1", "2", "7", "8", "9"}, versions); diff != "" {
		t.Errorf("mnist versions, by number (-want +got):\n%s", diff)
	}
}

// Registered models survive a restart of the store (a reopened database).
func TestModelsSurviveReopen(t *testing.T) {
	path := testDSN(t)
	ctx := t.Context()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.CreateModel(ctx, model.Version{Name: "m", Type: model.MLflowModel, Manifest: "h", Source: "azureml://jobs/j/outputs/model"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := s.Assets.Model(ctx, "m", "1")
	if err != nil || v.Source != "azureml://jobs/j/outputs/model" || v.Type != model.MLflowModel {
		t.Errorf("after reopen: %+v, %v", v, err)
	}
}
