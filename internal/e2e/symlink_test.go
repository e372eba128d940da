package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

// A symlink in the code folder that leads outside it (directly, through another link, or
// never ending) is refused at submit, naming the link and its target; nothing is created.
func TestSymlinkLeavingTheCodeFolderIsRefusedAtSubmit(t *testing.T) {
	w := newWS(t)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "outside\n"})
	tests := []struct {
		name  string
		links map[string]string // path under src → target
		want  string
	}{
		{"absolute target", map[string]string{"data": "/etc/passwd"},
			"code: src/data -> /etc/passwd: a symbolic link that points outside the code folder"},
		{"climbing out", map[string]string{"sub/up": "../../outside.txt"},
			"code: src/sub/up -> ../../outside.txt: a symbolic link that points outside the code folder"},
		{"through a linked folder", map[string]string{"ext": outside, "via": "ext/secret.txt"},
			"code: src/ext -> " + outside + ": a symbolic link that points outside the code folder"},
		{"loop", map[string]string{"a": "b", "b": "a"}, "code: src/a -> b: a symbolic link loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"job.yml": "command: ls -l\ncode: src\n", "src/train.py": "print(1)\n", "src/sub/x": "x"})
			for p, target := range tt.links {
				if err := os.Symlink(target, filepath.Join(dir, "src", p)); err != nil {
					t.Fatal(err)
				}
			}
			r := w.runIn(dir, "job", "create", "-f", "job.yml")
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("job create: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tt.want)
			}
		})
	}
	var list []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &list); err != nil || len(list) != 0 {
		t.Errorf("%d jobs after refused submissions (%v), want none", len(list), err)
	}
}

// Symlinks that stay inside the code folder keep working in the run.
func TestSymlinkInsideTheCodeFolderWorks(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"job.yml":           "command: cat link; cat sub/up/data/real.txt; cat lib/real.txt\ncode: src\n",
		"src/data/real.txt": "real content\n",
		"src/sub/keep":      "",
	})
	for p, target := range map[string]string{"link": "data/real.txt", "sub/up": "..", "lib": "data"} {
		if err := os.Symlink(target, filepath.Join(dir, "src", p)); err != nil {
			t.Fatal(err)
		}
	}
	r := w.runIn(dir, "job", "create", "-f", "job.yml", "--stream")
	if r.code != 0 || r.stdout != "real content\nreal content\nreal content\n" {
		t.Fatalf("job create --stream: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
