package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelGolden runs each testdata/model/*.txtar scenario: model.yml and the files beside it,
// --set overrides one per line in "args", and the expected result in want.json (the decoded
// spec and warnings) or want.err. Scenarios copied from Azure/azureml-examples say so in their
// comment. Run with -update to rewrite the want sections.
func TestModelGolden(t *testing.T) {
	goldenScenarios(t, "testdata/model/*.txtar", true, func(t *testing.T, a archive, dir string, sets []string) (any, []string, error) {
		yml, _ := a.get("model.yml")
		return ParseModel("model.yml", []byte(yml), dir, sets)
	})
}

// The model file's reading path: a missing file is an error naming it; ParseModelFile resolves
// paths against the file's folder.
func TestParseModelFile(t *testing.T) {
	dir := writeTree(t, map[string]string{"m/model.yml": "name: m\npath: ./w\n", "m/w/weights.bin": "w"})
	got, _, err := ParseModelFile(filepath.Join(dir, "m", "model.yml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "m", "w"); got.Path != want || got.Type != "custom_model" {
		t.Errorf("ParseModelFile = %+v, want path %s and type custom_model", got, want)
	}
	_, _, err = ParseModelFile(filepath.Join(dir, "nope.yml"), nil)
	if err == nil || !strings.Contains(err.Error(), "nope.yml: read:") {
		t.Errorf("missing file: %v", err)
	}
}

// Every field of a model file is named in docs/schema.md.
func TestSchemaDocNamesModelFields(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, "## Models")
	if i < 0 {
		t.Fatal("docs/schema.md has no Models section")
	}
	section := doc[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	names := append([]string{"flavors", "datastore", "local_path"}, modelReadOnly...)
	for _, k := range modelKeys {
		names = append(names, strings.TrimSuffix(k, ".*"))
	}
	for _, f := range names {
		if !strings.Contains(section, "`"+f+"`") {
			t.Errorf("the Models section of docs/schema.md does not name %s", f)
		}
	}
}

func FuzzParseModel(f *testing.F) {
	f.Add([]byte("name: m\npath: azureml://jobs/j/outputs/model\nversion: 2\ntags: {a: b}\n"), "version=3")
	f.Add([]byte("name: [\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		m, _, err := ParseModel("model.yml", data, t.TempDir(), sets)
		if err == nil && (m == nil || m.Name == "" || m.Path == "") {
			t.Fatalf("accepted a model without name or path: %+v", m)
		}
	})
}
