package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/dataset"
)

// Flags override the data file; a relative --path is made absolute, a URI kept; bad flags are
// usage errors; a local path is checked against the type before anything is uploaded.
func TestDataSpecFromFileAndFlags(t *testing.T) {
	dir := t.TempDir()
	for p, content := range map[string]string{"d/a.csv": "1", "t/x.csv": "2", "m/MLTable": "paths: []", "data.yml": "name: a\nversion: 3\npath: d\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := dataSpec(dataCreateFlags{fileAssetFlags: fileAssetFlags{file: filepath.Join(dir, "data.yml"), name: "b", sets: []string{"description=x"}}}, io.Discard)
	if err != nil || sp.Name != "b" || sp.Version != "3" || sp.Type != dataset.URIFolder || sp.Description != "x" || sp.Path != filepath.Join(dir, "d") {
		t.Errorf("spec = %+v, %v", sp, err)
	}
	t.Chdir(dir)
	if sp, err = dataSpec(dataCreateFlags{fileAssetFlags: fileAssetFlags{name: "c", path: "t", typ: "mltable"}}, io.Discard); err != nil || sp.Path != filepath.Join(dir, "t") {
		t.Errorf("flags only = %+v, %v", sp, err)
	}
	uri := "azureml://datastores/workspaceblobstore/paths/x/"
	if sp, err = dataSpec(dataCreateFlags{fileAssetFlags: fileAssetFlags{name: "c", path: uri}}, io.Discard); err != nil || sp.Path != uri {
		t.Errorf("a datastore path = %+v, %v", sp, err)
	}
	for _, f := range []fileAssetFlags{
		{path: "d"}, {name: "c"}, {name: "c", path: "d", typ: "csv"}, {name: "c", path: "d", version: "v 0"},
		{name: "c", path: "d", sets: []string{"x=1"}}, {name: "a b", path: "d"},
	} {
		var ee *ExitError
		if _, err := dataSpec(dataCreateFlags{fileAssetFlags: f}, io.Discard); !errors.As(err, &ee) || ee.Code != ExitUsage {
			t.Errorf("%+v: %v, want a usage error", f, err)
		}
	}
	for _, tt := range []struct{ typ, path, errHas string }{
		{dataset.MLTable, "m", ""},
		{dataset.MLTable, "t", "type mltable: t has no MLTable file"},
		{dataset.URIFile, "d", "type uri_file: d is a folder"},
		{dataset.URIFolder, "d/a.csv", "type uri_folder: d/a.csv is a file"},
		{dataset.URIFile, "d/a.csv", ""},
	} {
		_, err := checkLocalData(tt.typ, tt.path)
		if (tt.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
			t.Errorf("checkLocalData(%s, %s) = %v, want %q", tt.typ, tt.path, err, tt.errHas)
		}
	}
}
