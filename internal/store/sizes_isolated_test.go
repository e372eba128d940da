package store

import (
	"errors"
	"testing"

	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
)

// A workspace size keeps its isolated mark across a restart (migration 0023).
func TestSizeIsolatedSurvivesRestart(t *testing.T) {
	path := testDSN(t)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range []sizes.Size{
		{Name: "whole-box", Cores: 4, MemoryBytes: 8 * resources.Gi, Family: "onprem", Isolated: true},
		{Name: "shared-box", Cores: 4, MemoryBytes: 8 * resources.Gi, Family: "onprem"},
	} {
		if err := s.Cluster.CreateSize(t.Context(), z, t0); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Cluster.Sizes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	isolated := map[string]bool{}
	for _, z := range got {
		isolated[z.Name] = z.Isolated
	}
	if len(got) != 2 || !isolated["whole-box"] || isolated["shared-box"] {
		t.Errorf("after a restart: %+v", got)
	}
}

// A size's name is one name in any case (SQLite's COLLATE NOCASE; on PostgreSQL a
// case-insensitive collation): taken in another case, deleted in another case.
func TestSizeNamesIgnoreCase(t *testing.T) {
	s := open(t)
	z := sizes.Size{Name: "Big-Box", Cores: 4, MemoryBytes: 8 * resources.Gi, Family: "onprem"}
	if err := s.Cluster.CreateSize(t.Context(), z, t0); err != nil {
		t.Fatal(err)
	}
	z.Name = "BIG-box"
	if err := s.Cluster.CreateSize(t.Context(), z, t0); !errors.Is(err, ErrExists) {
		t.Errorf("CreateSize of BIG-box after Big-Box = %v; want ErrExists", err)
	}
	if err := s.Cluster.DeleteSize(t.Context(), "big-BOX"); err != nil {
		t.Errorf("DeleteSize(big-BOX) = %v; want Big-Box deleted", err)
	}
	if got, err := s.Cluster.Sizes(t.Context()); err != nil || len(got) != 0 {
		t.Errorf("sizes after the delete = %+v, %v; want none", got, err)
	}
}
