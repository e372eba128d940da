package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
)

// Components keep everything a pipeline step needs of them across a reopen: their declared
// inputs (defaults, bounds), the command step with its code snapshot, the next integer version
// and @latest skipping archived versions.
func TestComponentVersions(t *testing.T) {
	path := testDSN(t)
	ctx := t.Context()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	lo := 1.0
	spec := component.Spec{Name: "train", Type: component.Command, Deterministic: true,
		Inputs: map[string]component.Input{
			"epochs": {Input: job.Input{Type: job.InputInteger, Value: "3"}, HasDefault: true, Min: &lo},
			"data":   {Input: job.Input{Type: job.URIFolder, Mode: "ro_mount"}},
		},
		Outputs: map[string]job.Output{"model": {Type: job.URIFolder, Mode: "rw_mount"}},
		Job:     &job.Spec{Type: "command", Command: "python train.py", CodeSnapshot: "sha256:abc"}}
	mk := func(version string) (*component.Version, error) {
		v := component.Version{Spec: spec, Source: "train.yml", CreatedAt: at}
		v.Version = version
		return s.Assets.CreateComponent(ctx, v)
	}
	for _, tt := range []struct {
		version, want string
		err           error
	}{{"", "1", nil}, {"", "2", nil}, {"2", "", ErrExists}} {
		got, err := mk(tt.version)
		if !errors.Is(err, tt.err) || (err == nil && got.Version != tt.want) {
			t.Errorf("create train:%s = %+v, %v; want %q, %v", tt.version, got, err, tt.want, tt.err)
		}
	}
	if _, err := s.Assets.SetComponentArchived(ctx, "train", "2", true); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Assets.Component(ctx, "train", "latest")
	if err != nil {
		t.Fatal(err)
	}
	want := component.Version{Spec: spec, Source: "train.yml", CreatedAt: at}
	want.Version = "1"
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("train@latest after a reopen (-want +got):\n%s", d)
	}
	all, err := s.Assets.Components(ctx, "")
	if err != nil || len(all) != 2 || !all[1].Archived {
		t.Errorf("components = %+v, %v; want 2 versions, the second archived", all, err)
	}
	if _, err := s.Assets.Component(ctx, "ghost", "latest"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ghost = %v, want ErrNotFound", err)
	}
}
