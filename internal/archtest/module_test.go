package archtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeModule writes a small Go module: files maps a path to its content.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const moduleDoc = "## Layers\n1. `low`: below.\n2. `high`: above.\n\n## Packages\n" +
	"| package | layer | holds | imports |\n|---|---|---|---|\n" +
	"| `internal/low` | low | the bottom | std |\n" +
	"| `internal/high` | high | the top | low |\n" +
	"| `cmd/tool` | high | main | high |\n"

// The whole check, go list included, on a module whose code changed under its page: an import
// that runs up the layers and a row that no longer says what the package imports both fail it.
func TestCheckModuleFindsAnImportRunningUp(t *testing.T) {
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	files := map[string]string{
		"go.mod":                  "module example.com/m\n\ngo 1.22\n",
		"docs/architecture.md":    moduleDoc,
		"internal/low/low.go":     "package low\n\nconst Name = \"low\"\n",
		"internal/high/high.go":   "package high\n\nimport \"example.com/m/internal/low\"\n\nconst Name = low.Name + \"high\"\n",
		"internal/high/x_test.go": "package high_test\n\nimport _ \"example.com/m/cmd/tool\"\n", // tests may import anything
		"cmd/tool/main.go":        "package main\n\nimport \"example.com/m/internal/high\"\n\nfunc main() { println(high.Name) }\n",
	}
	if got := checkModule(t, writeModule(t, files), nil); len(got) != 0 {
		t.Fatalf("the module agrees with its page, yet the check says:\n%s", strings.Join(got, "\n"))
	}

	files["internal/low/low.go"] = "package low\n\nimport \"example.com/m/internal/high\"\n\nvar Name = high.Name\n"
	files["internal/high/high.go"] = "package high\n\nconst Name = \"high\"\n"
	got := checkModule(t, writeModule(t, files), nil)
	want := []string{
		"docs/architecture.md:8: row internal/low lists imports std; the code imports high (missing: high): write `high` in its imports column",
		"docs/architecture.md:9: row internal/high lists imports low; the code imports no internal package (not imported: low): write `std` in its imports column",
		`internal/low imports internal/high, which is above it: internal/low is in layer low (1), internal/high in layer high (2) (docs/architecture.md, "## Layers"); move what internal/low needs down to layer low or below, or move internal/low up`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check (-want +got):\n%s", diff)
	}
}
