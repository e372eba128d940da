package snapshot

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A code snapshot with additional includes, as Azure builds one: the code folder's files at the
// root (its ignore file honoured), each included folder under its own name (its own ignore file
// honoured), each included file by its name; a single code file at the root by its name; a
// name two parts want refused.
func TestScanCode(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"src/main.py": "main", "src/.amlignore": "*.tmp\n", "src/x.tmp": "no",
		"common/helper.py": "help", "common/.amlignore": "cache/\n", "common/cache/big": "no",
		"shared/conf.yml": "conf", "train.py": "train", "other/main.py": "clash",
	})
	p := func(s string) string { return filepath.Join(dir, s) }
	paths := func(m *Manifest) []string {
		var out []string
		for _, e := range m.Entries {
			out = append(out, e.Path)
		}
		return out
	}
	m, local, st, err := ScanCode(t.Context(), p("src"), []string{p("common"), p("shared/conf.yml")}, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".amlignore", "common", "common/.amlignore", "common/helper.py", "conf.yml", "main.py"}
	if diff := cmp.Diff(want, paths(m)); diff != "" {
		t.Errorf("code with includes (-want +got):\n%s", diff)
	}
	if local[sha("help")] != p("common/helper.py") || local[sha("conf")] != p("shared/conf.yml") || st.Files != 5 {
		t.Errorf("local files %v, stats %+v", local, st)
	}
	if _, _, err := m.Encode(); err != nil {
		t.Errorf("the composed manifest does not encode: %v", err)
	}

	m, _, _, err = ScanCode(t.Context(), p("train.py"), []string{p("common/helper.py")}, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"helper.py", "train.py"}, paths(m)); diff != "" {
		t.Errorf("a single code file with an include (-want +got):\n%s", diff)
	}
	m, _, _, err = ScanCode(t.Context(), "", []string{p("common")}, ScanOptions{})
	if err != nil || len(m.Entries) != 3 {
		t.Errorf("includes without code = %v, %v", paths(m), err)
	}

	for _, inc := range [][]string{{p("other/main.py")}, {p("common"), p("common")}} {
		if _, _, _, err := ScanCode(t.Context(), p("src"), inc, ScanOptions{}); !errors.Is(err, ErrNameTaken) {
			t.Errorf("includes %v = %v, want ErrNameTaken", inc, err)
		}
	}
	if _, _, _, err := ScanCode(t.Context(), p("src"), []string{p("nope")}, ScanOptions{}); err == nil {
		t.Error("a missing include is accepted")
	}
}
