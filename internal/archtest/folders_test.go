package archtest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// No two top folders of the module import each other, even through different packages.
func TestNoFolderCycle(t *testing.T) {
	root, err := ModuleRoot(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := ListPackages(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range FolderCycles(pkgs) {
		t.Error(p)
	}
}

func TestFolderCyclesFindsACycleThroughSubpackages(t *testing.T) {
	pkgs := []Package{
		{Path: "internal/backend/cluster", Imports: []string{"internal/provider", "internal/backend"}},
		{Path: "internal/provider/local", Imports: []string{"internal/agent"}},
		{Path: "internal/agent", Imports: []string{"internal/backend/local"}},
		{Path: "internal/backend/local", Imports: []string{"internal/job"}},
		{Path: "cmd/hangar", Imports: []string{"internal/agent"}},
	}
	want := []string{"folders internal/agent, internal/backend, internal/provider import each other (through their packages): move what they share down a layer"}
	if d := cmp.Diff(want, FolderCycles(pkgs)); d != "" {
		t.Errorf("cycles (-want +got):\n%s", d)
	}
	if got := FolderCycles(pkgs[1:]); len(got) != 0 {
		t.Errorf("no cycle without backend/cluster, got %v", got)
	}
}
