package dataset

import (
	"strings"
	"testing"
)

func TestCheckType(t *testing.T) {
	for in, want := range map[string]string{"": URIFolder, "URI_FILE": URIFile, "uri-folder": URIFolder, "mltable": MLTable} {
		if got, err := CheckType(in); err != nil || got != want {
			t.Errorf("CheckType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := CheckType("custom_model"); err == nil || !strings.Contains(err.Error(), "uri_folder, uri_file, mltable") {
		t.Errorf("CheckType(custom_model) = %v", err)
	}
}

func TestCheckFiles(t *testing.T) {
	tests := []struct {
		typ    string
		files  []string
		errHas string
	}{
		{typ: URIFolder, files: []string{"a", "b/c"}},
		{typ: URIFile, files: []string{"a.csv"}},
		{typ: URIFile, files: []string{"a", "b"}, errHas: "type uri_file: ./d holds 2 files, expected one file"},
		{typ: MLTable, files: []string{"MLTable", "t.csv"}},
		{typ: MLTable, files: []string{"sub/MLTable", "t.csv"}, errHas: "type mltable: ./d has no MLTable file at its top"},
		{typ: MLTable, files: []string{"mltable"}, errHas: "has no MLTable file"},
	}
	for _, tt := range tests {
		err := CheckFiles(tt.typ, "./d", tt.files)
		if (tt.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
			t.Errorf("CheckFiles(%s, %v) = %v, want error %q", tt.typ, tt.files, err, tt.errHas)
		}
	}
}
