package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComputeGolden runs each testdata/compute/*.txtar scenario like TestGolden: the
// compute.yml section and the files beside it (HOME is their folder, so ~/ paths resolve
// there), --set overrides one per line in "args", and the expected want.json (the spec
// and warnings) or want.err. go test -run TestComputeGolden -update rewrites them.
func TestComputeGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/compute/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(string(data))
			gotName, got := runComputeScenario(t, a)
			if *update {
				var kept []archiveFile
				for _, f := range a.files {
					if f.name != "want.json" && f.name != "want.err" {
						kept = append(kept, f)
					}
				}
				a.files = append(kept, archiveFile{gotName, got})
				if err := os.WriteFile(path, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, ok := a.get(gotName)
			if !ok {
				t.Fatalf("got %s, but the scenario has no %s section:\n%s", gotName, gotName, got)
			}
			diff(t, got, want)
		})
	}
}

func runComputeScenario(t *testing.T, a archive) (string, string) {
	t.Helper()
	files := map[string]string{}
	for _, f := range a.files {
		if f.name != "args" && !strings.HasPrefix(f.name, "want.") {
			files[f.name] = f.data
		}
	}
	dir := writeTree(t, files)
	t.Setenv("HOME", dir)
	var sets []string
	if args, ok := a.get("args"); ok {
		sets = strings.Split(strings.TrimRight(args, "\n"), "\n")
	}
	yml, _ := a.get("compute.yml")
	s, warnings, err := ParseCompute("compute.yml", []byte(yml), dir, sets)
	if err != nil {
		return "want.err", strings.ReplaceAll(err.Error(), dir, "$DIR") + "\n"
	}
	out, jerr := json.MarshalIndent(map[string]any{"result": s, "warnings": warnings}, "", "  ")
	if jerr != nil {
		t.Fatal(jerr)
	}
	return "want.json", strings.ReplaceAll(string(out), dir, "$DIR") + "\n"
}
