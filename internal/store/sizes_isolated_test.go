package store

import (
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
		if err := s.CreateSize(t.Context(), z, t0); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Sizes(t.Context())
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
