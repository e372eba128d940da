package spec

import (
	"encoding/json"
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
	paths, err := filepath.Glob("testdata/model/*.txtar")
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
			gotName, got := runModelScenario(t, a)
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

func runModelScenario(t *testing.T, a archive) (string, string) {
	files := map[string]string{}
	for _, f := range a.files {
		if f.name != "args" && !strings.HasPrefix(f.name, "want.") {
			files[f.name] = f.data
		}
	}
	dir := writeTree(t, files)
	var sets []string
	if args, ok := a.get("args"); ok {
		sets = strings.Split(strings.TrimRight(args, "\n"), "\n")
	}
	yml, _ := a.get("model.yml")
	m, warnings, err := ParseModel("model.yml", []byte(yml), dir, sets)
	// A path may leave the scenario's folder (../basic-chat): its parent is $PARENT.
	clean := strings.NewReplacer(dir, "$DIR", filepath.Dir(dir), "$PARENT").Replace
	if err != nil {
		return "want.err", clean(err.Error()) + "\n"
	}
	out, jerr := json.MarshalIndent(map[string]any{"result": m, "warnings": warnings}, "", "  ")
	if jerr != nil {
		t.Fatal(jerr)
	}
	return "want.json", clean(string(out)) + "\n"
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
