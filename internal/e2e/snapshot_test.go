package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var uploadedRE = regexp.MustCompile(`Uploaded code: (\d+) files \(([^)]*)\)(?:, (\d+) ignored)?; sent (\d+) new`)

// Resubmitting an unchanged code tree sends no file bytes; ignore files are honoured.
func TestSnapshotResubmitAndIgnores(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	files := map[string]string{
		"job.yml":               "command: find . -type f | sort\ncode: src\n",
		"src/train.py":          "print('hi')\n",
		"src/run/.gitignore":    "*.log\n",
		"src/run/app.log":       "ignored by .gitignore\n",
		"src/run/keep.py":       "kept\n",
		"src/data/.amlignore":   "big.bin\n",
		"src/data/.gitignore":   "keep.txt\n", // the .amlignore in this folder wins over its .gitignore
		"src/data/big.bin":      "ignored by .amlignore\n",
		"src/data/keep.txt":     "kept: .gitignore here is shadowed\n",
		"src/.hangarignore":     "secret.txt\n",
		"src/secret.txt":        "ignored by .hangarignore (which shadows .gitignore here)\n",
		"src/.git/config":       "ignored by default\n",
		"src/__pycache__/x.pyc": "ignored by default\n",
		"src/.venv/bin/python":  "ignored by default\n",
	}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("src/pkg/m%02d.py", i)] = fmt.Sprintf("X = %d\n", i)
	}
	writeFiles(t, dir, files)
	file := filepath.Join(dir, "job.yml")
	r := w.ok("job", "create", "-f", file, "--stream")
	m := uploadedRE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no upload summary in %q", r.stderr)
	}
	if m[4] == "0" {
		t.Errorf("first submission sent nothing: %s", m[0])
	}
	listing := r.stdout
	for _, want := range []string{"./train.py", "./data/keep.txt", "./.hangarignore", "./pkg/m49.py", "./run/keep.py", "./run/.gitignore"} {
		if !strings.Contains(listing, want+"\n") {
			t.Errorf("snapshot lacks %s:\n%s", want, listing)
		}
	}
	for _, unwanted := range []string{"app.log", "big.bin", "secret.txt", ".git/", "__pycache__", ".venv"} {
		if strings.Contains(listing, unwanted) {
			t.Errorf("snapshot holds %s:\n%s", unwanted, listing)
		}
	}
	r = w.ok("job", "create", "-f", file)
	m2 := uploadedRE.FindStringSubmatch(r.stderr)
	if m2 == nil || m2[4] != "0" || m2[1] != m[1] {
		t.Errorf("second submission of an unchanged tree: %q, want 0 new of %s files", r.stderr, m[1])
	}
	if !strings.Contains(r.stderr, "(0 B)") {
		t.Errorf("second submission sent bytes: %q", r.stderr)
	}
	writeFiles(t, dir, map[string]string{"src/train.py": "print('changed')\n"})
	r = w.ok("job", "create", "-f", file)
	if m3 := uploadedRE.FindStringSubmatch(r.stderr); m3 == nil || m3[4] != "1" {
		t.Errorf("after changing one file: %q, want 1 new", r.stderr)
	}
}

// Without a running server, the CLI starts one in the background; `server stop` stops it.
func TestAutostartAndStop(t *testing.T) {
	w := &ws{t: t, home: t.TempDir()}
	t.Cleanup(w.cleanup)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": "command: echo autostarted\n"})
	r := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	if strings.TrimSpace(r.stdout) != "autostarted" || !strings.Contains(r.stderr, "Starting the local workspace server") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	if r := w.ok("server", "status"); !strings.Contains(r.stdout, "running") {
		t.Errorf("server status: %q", r.stdout)
	}
	w.ok("server", "stop")
	if r := w.run("server", "status"); r.code == 0 {
		t.Errorf("server still running after stop: %q", r.stdout)
	}
	// The next command starts it again, with the workspace intact.
	if r := w.ok("job", "list"); !strings.Contains(r.stdout, "Completed") {
		t.Errorf("job list after restart: %q", r.stdout)
	}
	w.ok("server", "stop")
}
