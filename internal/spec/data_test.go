package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataGolden runs each testdata/data/*.txtar scenario: data.yml and the files beside it,
// --set overrides one per line in "args", and the expected result in want.json (the decoded spec
// and warnings) or want.err. Scenarios copied from Azure/azureml-examples say so in their
// comment. Run with -update to rewrite the want sections.
func TestDataGolden(t *testing.T) {
	goldenScenarios(t, "testdata/data/*.txtar", false, func(t *testing.T, a archive, dir string, sets []string) (any, []string, error) {
		yml, _ := a.get("data.yml")
		return ParseData("data.yml", []byte(yml), dir, sets)
	})
}

// ParseDataFile resolves paths against the file's folder; a missing file is named.
func TestParseDataFile(t *testing.T) {
	dir := writeTree(t, map[string]string{"d/data.yml": "name: a\npath: ./x\n", "d/x/f.csv": "1"})
	got, _, err := ParseDataFile(filepath.Join(dir, "d", "data.yml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "d", "x"); got.Path != want || got.Type != "uri_folder" {
		t.Errorf("ParseDataFile = %+v, want path %s and type uri_folder", got, want)
	}
	if _, _, err := ParseDataFile(filepath.Join(dir, "nope.yml"), nil); err == nil || !strings.Contains(err.Error(), "nope.yml: read:") {
		t.Errorf("missing file: %v", err)
	}
}

func TestParseDatastore(t *testing.T) {
	tests := []struct {
		name, yml, errHas string
	}{
		{name: "local folder", yml: "name: nfs\ntype: local_folder\npath: /shared/data\ncomputes: [local, gpu]\ndescription: d\n"},
		{name: "adls gen1", yml: "name: x\ntype: azure_data_lake_gen1\nstore_name: s\n", errHas: "ds.yml: type: type azure_data_lake_gen1: Azure Data Lake Storage Gen1 was retired"},
		{name: "relative path", yml: "name: nfs\ntype: local_folder\npath: data\n", errHas: "ds.yml: path: expected a clean absolute folder path"},
		{name: "unknown type", yml: "name: nfs\ntype: hdfs\npath: /a\n", errHas: "ds.yml: type: expected one of local_folder, azure_blob, azure_data_lake_gen2, s3, gcs"},
		{name: "builtin", yml: "name: workspaceblobstore\ntype: local_folder\npath: /a\n", errHas: "workspaceblobstore is the workspace's own datastore"},
		{name: "missing", yml: "description: x\n", errHas: "ds.yml: name: required"},
		{name: "unknown field", yml: "name: nfs\ntype: local_folder\npath: /a\nmount: yes\n", errHas: "mount"},
		{name: "s3 field on local", yml: "name: nfs\ntype: local_folder\npath: /a\nbucket: bkt\n", errHas: "ds.yml: bucket: not a field of a local_folder datastore (line 4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := ParseDatastore("ds.yml", []byte(tt.yml), nil)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("ParseDatastore = %+v, %v; want an error with %q", f, err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := f.Datastore
			if d.Name != "nfs" || d.Type != "local_folder" || d.Path != "/shared/data" || strings.Join(d.Computes, ",") != "local,gpu" || f.Credentials != nil {
				t.Errorf("ParseDatastore = %+v", f)
			}
		})
	}
}

// Every field of a data file and a datastore file is named in docs/schema.md.
func TestSchemaDocNamesDataFields(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for heading, keys := range map[string][]string{"## Data assets": append(dataKeys, dataReadOnly...), "## Datastores": datastoreKeys} {
		i := strings.Index(doc, heading)
		if i < 0 {
			t.Fatalf("docs/schema.md has no %s section", heading)
		}
		section := doc[i:]
		if j := strings.Index(section[3:], "\n## "); j >= 0 {
			section = section[:j+3]
		}
		for _, k := range keys {
			if f := strings.TrimSuffix(k, ".*"); !strings.Contains(section, "`"+f+"`") {
				t.Errorf("the %s section of docs/schema.md does not name %s", heading, f)
			}
		}
	}
}

func FuzzParseData(f *testing.F) {
	f.Add([]byte("name: d\npath: azureml://datastores/workspaceblobstore/paths/a/\nversion: 2\ntags: {a: b}\n"), "version=3")
	f.Add([]byte("name: d\ntype: mltable\npath: https://x/y\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		_, _, _ = ParseData("data.yml", data, t.TempDir(), sets)
	})
}
