package spec

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pipelineGolden holds what every file under testdata/pipelines decodes to.
const pipelineGolden = "testdata/pipelines.golden.json"

// TestPipelineGolden decodes pipeline jobs and components of github.com/Azure/azureml-examples
// (copied unchanged under testdata/pipelines, see its README) and compares each result, its
// warnings, or its errors (the ones Hangar refuses, each for a stated reason: a Spark step)
// with testdata/pipelines.golden.json (-update rewrites it).
func TestPipelineGolden(t *testing.T) {
	old := RandomSeed
	RandomSeed = func() int64 { return 42 }
	t.Cleanup(func() { RandomSeed = old })
	root, err := filepath.Abs(filepath.Join("testdata", "pipelines"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	decoded := 0
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !(strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		var result any
		var warnings []string
		switch s := string(data); {
		case strings.Contains(s, "Component.schema.json"):
			result, warnings, err = ParseComponentFile(p, nil)
		case strings.Contains(s, "pipelineJob.schema.json"):
			result, warnings, err = ParseJobFile(p, nil)
		default:
			return nil // a conda file, an MLTable
		}
		if err != nil {
			got[rel] = map[string]any{"errors": strings.Split(err.Error(), "\n")}
			return nil
		}
		decoded++
		got[rel] = map[string]any{"result": result, "warnings": warnings}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if decoded < 20 {
		t.Fatalf("only %d example files decoded", decoded)
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(out), root, "$DIR") + "\n"
	if *update {
		if err := os.WriteFile(pipelineGolden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(pipelineGolden)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, text, string(want))
}
