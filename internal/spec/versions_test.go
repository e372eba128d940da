package spec

import (
	"path/filepath"
	"testing"
)

// Versions are strings, as Azure's (its component and asset files write version: 0.0.1 and
// version: "1"): the text as written is the version, whatever YAML makes of it (0.10 is not
// 0.1), digits only are an integer in its canonical form, and what no reference could name is
// refused with the file, field and line.
func TestVersionsAreStrings(t *testing.T) {
	dir := writeTree(t, map[string]string{"m/w.bin": "1", "d/x.csv": "1\n"})
	for _, tt := range []struct{ version, want string }{
		{"0.0.1", "0.0.1"}, {`"1"`, "1"}, {"1", "1"}, {"0.10", "0.10"}, {"v2-beta_1", "v2-beta_1"}, {"007", "7"},
	} {
		c, _, err := ParseComponentFile(filepath.Join(writeTree(t, map[string]string{"c.yml": "name: c\nversion: " + tt.version + "\ncommand: echo\n"}), "c.yml"), nil)
		if err != nil || c.Version != tt.want {
			t.Errorf("component version %s = %+v, %v; want %q", tt.version, c, err, tt.want)
		}
		m, _, err := ParseModel("model.yml", []byte("name: m\nversion: "+tt.version+"\npath: m\n"), dir, nil)
		if err != nil || m.Version != tt.want {
			t.Errorf("model version %s = %+v, %v; want %q", tt.version, m, err, tt.want)
		}
		d, _, err := ParseData("data.yml", []byte("name: d\nversion: "+tt.version+"\npath: d\n"), dir, nil)
		if err != nil || d.Version != tt.want {
			t.Errorf("data version %s = %+v, %v; want %q", tt.version, d, err, tt.want)
		}
	}
	for _, tt := range []struct{ version, want string }{
		{"latest", "c.yml: version: latest is a label, not a version (name@latest names the newest component) (line 2)"},
		{"a/b", `c.yml: version: expected letters, digits, '.', '_' and '-', starting with a letter or digit (at most 100), like 1 or 0.0.1, got "a/b" (line 2)`},
		{"[1]", "c.yml: version: expected a version (a string or an integer), got a list (line 2)"},
	} {
		_, _, err := ParseComponentFile(filepath.Join(writeTree(t, map[string]string{"c.yml": "name: c\nversion: " + tt.version + "\ncommand: echo\n"}), "c.yml"), nil)
		checkErr(t, err, tt.want)
	}
}
