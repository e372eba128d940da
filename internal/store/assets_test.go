package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/model"
)

// Versions are strings, as Azure's (issue 28): 0.0.1 and v2 are stored as written and found by
// that string; a create without a version takes the next integer after the highest integer one;
// @latest is the newest created, not the highest number; "1.0" is not "1". The same for the
// three kinds, which share the table shape.
func TestStringVersionsAndLatestByCreation(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	kinds := map[string]func(version string, i int) (string, error){
		"component": func(version string, i int) (string, error) {
			v := component.Version{Spec: component.Spec{Name: "c", Version: version, Type: component.Command}, CreatedAt: at.Add(time.Duration(i) * time.Second)}
			got, err := s.Assets.CreateComponent(ctx, v)
			if err != nil {
				return "", err
			}
			return got.Version, nil
		},
		"model": func(version string, i int) (string, error) {
			got, err := s.Assets.CreateModel(ctx, model.Version{Name: "m", Version: version, Type: model.CustomModel, Manifest: "h", CreatedAt: at.Add(time.Duration(i) * time.Second)})
			if err != nil {
				return "", err
			}
			return got.Version, nil
		},
		"data": func(version string, i int) (string, error) {
			got, err := s.Assets.CreateData(ctx, dataset.Version{Name: "d", Version: version, Type: dataset.URIFolder, Manifest: "h", CreatedAt: at.Add(time.Duration(i) * time.Second)})
			if err != nil {
				return "", err
			}
			return got.Version, nil
		},
	}
	latest := map[string]func() (string, error){
		"component": func() (string, error) { v, err := s.Assets.Component(ctx, "c", "latest"); return ver(v, err) },
		"model":     func() (string, error) { v, err := s.Assets.Model(ctx, "m", "latest"); return ver(v, err) },
		"data":      func() (string, error) { v, err := s.Assets.Data(ctx, "d", "latest"); return ver(v, err) },
	}
	for kind, create := range kinds {
		var got []string
		for i, version := range []string{"0.0.1", "", "5", "v2", "", "1.0"} {
			v, err := create(version, i)
			if err != nil {
				t.Fatalf("%s: create %q: %v", kind, version, err)
			}
			got = append(got, v)
		}
		if diff := cmp.Diff([]string{"0.0.1", "1", "5", "v2", "6", "1.0"}, got); diff != "" {
			t.Errorf("%s: versions as created (-want +got):\n%s", kind, diff)
		}
		if _, err := create("0.0.1", 9); !errors.Is(err, ErrExists) {
			t.Errorf("%s: 0.0.1 again = %v, want ErrExists", kind, err)
		}
		if v, err := latest[kind](); err != nil || v != "1.0" {
			t.Errorf("%s: @latest = %q, %v; want 1.0, the newest created", kind, v, err)
		}
	}
	if _, err := s.Assets.SetModelArchived(ctx, "m", "1.0", true); err != nil {
		t.Fatal(err)
	}
	if v, err := latest["model"](); err != nil || v != "6" {
		t.Errorf("model @latest with 1.0 archived = %q, %v; want 6", v, err)
	}
	if v, err := s.Assets.Model(ctx, "m", "0.0.1"); err != nil || v.Version != "0.0.1" {
		t.Errorf("model m:0.0.1 = %+v, %v", v, err)
	}
	all, err := s.Assets.Components(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, v := range all {
		order = append(order, v.Version)
	}
	if diff := cmp.Diff([]string{"0.0.1", "1", "5", "v2", "6", "1.0"}, order); diff != "" {
		t.Errorf("components listed in creation order (-want +got):\n%s", diff)
	}
}

type versioned interface {
	*component.Version | *model.Version | *dataset.Version
}

func ver[T versioned](v T, err error) (string, error) {
	if err != nil {
		return "", err
	}
	switch x := any(v).(type) {
	case *component.Version:
		return x.Version, nil
	case *model.Version:
		return x.Version, nil
	case *dataset.Version:
		return x.Version, nil
	}
	return "", nil
}
