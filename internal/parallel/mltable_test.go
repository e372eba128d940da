package parallel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadMLTable(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.csv", "sub/b.csv", "sub/deep/c.csv", "notes.txt"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, mltable string
		files         []string
		want          Table // Files left out
		err           string
	}{
		{"defaults: delimited, comma, same headers", "paths:\n  - file: ./a.csv\n", []string{"a.csv"},
			Table{Format: "delimited", Delimiter: ",", Header: "all_files_same_headers", Encoding: "utf-8"}, ""},
		{"folder, then a ** pattern", "paths:\n  - folder: ./sub\n  - pattern: '**/*.csv'\ntransformations:\n  - read_json_lines:\n      encoding: utf8bom\n",
			[]string{"sub/b.csv", "sub/deep/c.csv", "a.csv", "sub/b.csv", "sub/deep/c.csv"},
			Table{Format: "json_lines", Delimiter: ",", Header: "all_files_same_headers", Encoding: "utf-8-sig"}, ""},
		{"a pattern stays in its folder level", "$schema: x\ntype: mltable\npaths:\n  - pattern: ./*.csv\ntransformations:\n  - read_delimited: {delimiter: '\t', header: from_first_file, encoding: latin1, empty_as_string: true}\n",
			[]string{"a.csv"}, Table{Format: "delimited", Delimiter: "\t", Header: "from_first_file", Encoding: "latin-1", EmptyAsString: true}, ""},
		{"no paths", "transformations: []\n", nil, Table{}, "MLTable: paths: required"},
		{"another transformation", "paths:\n  - file: a.csv\ntransformations:\n  - read_delimited: {}\n  - take: 5\n", nil, Table{},
			"MLTable: transformations[1]: take is not supported (Hangar reads read_delimited and read_json_lines)"},
		{"an option Hangar does not read", "paths:\n  - file: a.csv\ntransformations:\n  - read_delimited: {include_path_column: true}\n", nil, Table{},
			"transformations[0].read_delimited.include_path_column: not supported (Hangar reads encoding, delimiter, header, empty_as_string)"},
		{"a bad header", "paths:\n  - file: a.csv\ntransformations:\n  - read_delimited: {header: first}\n", nil, Table{},
			`transformations[0].read_delimited.header: expected one of all_files_same_headers, from_first_file, no_header, got "first"`},
		{"utf16 cannot be cut at newlines", "paths:\n  - file: a.csv\ntransformations:\n  - read_delimited: {encoding: utf16}\n", nil, Table{},
			`transformations[0].read_delimited.encoding: expected one of`},
		{"a path outside the folder", "paths:\n  - file: ../etc/passwd\n", nil, Table{}, `paths[0].file: "../etc/passwd" is not a path inside the mltable's folder`},
		{"a URL", "paths:\n  - folder: azureml://datastores/d/paths/x\n", nil, Table{}, `paths[0].folder: "azureml://datastores/d/paths/x" is not a path inside`},
		{"a missing file", "paths:\n  - file: nope.csv\n", nil, Table{}, `paths[0].file: "nope.csv" is not a file in the mltable's folder`},
		{"two kinds in one entry", "paths:\n  - {file: a.csv, folder: sub}\n", nil, Table{}, "paths[0].file, folder: expected one of file, folder or pattern"},
		{"an unknown key", "paths:\n  - file: a.csv\ntraits: {index_columns: [a]}\n", nil, Table{}, "MLTable: traits: not supported (Hangar reads paths and transformations)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, MLTableFile), []byte(tt.mltable), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadMLTable(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.files {
				tt.want.Files = append(tt.want.Files, filepath.Join(dir, f))
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
