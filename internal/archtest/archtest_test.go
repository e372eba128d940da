package archtest

import (
	"os"
	"path/filepath"
	"testing"
)

// knownUpward are the imports allowed to run up the layers for a while, each with the issue that
// removes it, e.g. {From: "internal/backend/cluster", To: "internal/agent/dispatch", Why: "issue
// 11: ..."}. The check fails once one no longer happens, so that the list cannot hide a new one.
// None today: issue 11 removed the last (internal/backend/cluster imported internal/agent/dispatch).
var knownUpward = []Exception{}

// The document's package table and layers are what the code does: run on every `go test ./...`.
func TestArchitectureDocMatchesCode(t *testing.T) {
	root, err := ModuleRoot(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	problems := checkModule(t, root, knownUpward)
	for _, p := range problems {
		t.Error(p)
	}
}

// checkModule runs the whole check on the module at root and returns its problems.
func checkModule(t testing.TB, root string, known []Exception) []string {
	t.Helper()
	const file = "docs/architecture.md"
	text, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseDoc(file, string(text))
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := ListPackages(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list ./... in %s found no packages", root)
	}
	return Check(doc, pkgs, known)
}
