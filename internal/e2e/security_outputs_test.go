package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// A run that links its outputs, logs or a named output to the node's files (issue 27, item 9):
// the links are not collected, the run says which in job show and in its system log, and the
// download holds everything else, the logs included. Before, the link was registered and then
// failed every `job download --all` of the run ("symlink target leaves the tree").
func TestSecurityOutputLinksLeavingTheTree(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": `command: >-
  mkdir -p logs && ln -s /etc/passwd logs/l &&
  ln -s ../../../../../../../../etc outputs/up &&
  echo kept > outputs/data.txt && ln -s data.txt outputs/latest &&
  ln -s /etc/hostname ${{outputs.model}}/host && echo w > ${{outputs.model}}/w.bin &&
  echo hi
outputs:
  model: {type: uri_folder}
`})
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("run ended %s (%q), want Completed: a link the run made is no failure of its command", d.Status, d.StatusReason)
	}
	wantWarnings := []string{
		"logs/l -> /etc/passwd: a symbolic link that points outside the run's artifacts; it was not collected",
		"outputs/up -> ../../../../../../../../etc: a symbolic link that points outside the run's artifacts; it was not collected",
		"output model: host -> /etc/hostname: a symbolic link that points outside the output; it was not collected",
	}
	shown := w.ok("job", "show", name).stdout
	for _, want := range wantWarnings {
		if !strings.Contains(shown, want) {
			t.Errorf("job show does not warn %q:\n%s", want, shown)
		}
	}

	out := t.TempDir()
	r := w.run("job", "download", name, "--all", "--download-path", out)
	if r.code != 0 {
		t.Fatalf("job download --all: exit %d, stderr %q; want 0", r.code, r.stderr)
	}
	base := filepath.Join(out, name)
	if got := readFile(t, filepath.Join(base, "artifacts", "user_logs", "std_log.txt")); !strings.Contains(got, "hi") {
		t.Errorf("the downloaded log %q lacks the run's output", got)
	}
	if got := readFile(t, filepath.Join(base, "artifacts", "outputs", "latest")); got != "kept\n" {
		t.Errorf("outputs/latest, a link inside the outputs, reads %q, want %q", got, "kept\n")
	}
	if got := readFile(t, filepath.Join(base, "named-outputs", "model", "w.bin")); got != "w\n" {
		t.Errorf("named-outputs/model/w.bin reads %q", got)
	}
	sys := readFile(t, filepath.Join(base, "artifacts", "system_logs", "supervisor.txt"))
	for _, want := range wantWarnings[:2] {
		if !strings.Contains(sys, want) {
			t.Errorf("the run's system log does not say %q", want)
		}
	}
	for _, p := range []string{"artifacts/logs/l", "artifacts/outputs/up", "named-outputs/model/host"} {
		if _, err := os.Lstat(filepath.Join(base, p)); err == nil {
			t.Errorf("%s was downloaded", p)
		}
	}
	noNodeFiles(t, out)
}

// A manifest registered with a link out of the tree (a run before links were refused, or one
// that registers its own crafted manifest with its token, as here) is downloaded without that
// link: a warning names it, the rest comes down, and nothing is written or linked outside the
// download folder. Before, the download failed as a whole.
func TestSecurityCraftedOutputLinkIsSkippedAtDownload(t *testing.T) {
	w := newWS(t)
	outside := t.TempDir()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"job.yml": "command: python3 forge.py " + outside + "\ncode: src\n",
		"src/forge.py": `import hashlib, json, os, sys, urllib.request
url = os.environ["MLFLOW_TRACKING_URI"].rstrip("/")
token = os.environ.get("MLFLOW_TRACKING_TOKEN") or os.environ["HANGAR_RUN_TOKEN"]
run = os.environ["HANGAR_RUN_ID"]
def call(method, path, body, kind):
    req = urllib.request.Request(url + path, data=body, method=method,
        headers={"Authorization": "Bearer " + token, "Content-Type": kind})
    return urllib.request.urlopen(req).read()
data = b"forged but harmless\n"
dh = hashlib.sha256(data).hexdigest()
call("PUT", "/api/blobs/" + dh, data, "application/octet-stream")
entries = [
    {"path": "outputs", "type": "dir", "mode": 0o755},
    {"path": "outputs/evil", "type": "symlink", "mode": 0o777, "target": sys.argv[1]},
    {"path": "outputs/up", "type": "symlink", "mode": 0o777, "target": "../../../../../../../../../tmp"},
    {"path": "outputs/via", "type": "symlink", "mode": 0o777, "target": "evil/x"},
    {"path": "outputs/ok.txt", "type": "file", "mode": 0o644, "hash": dh, "size": len(data)},
]
m = json.dumps({"entries": entries}, separators=(",", ":")).encode()
mh = hashlib.sha256(m).hexdigest()
call("PUT", "/api/blobs/" + mh, m, "application/octet-stream")
print(call("POST", "/api/runs/%s/artifacts" % run, json.dumps({"artifacts": mh}).encode(), "application/json").decode())
print("registered")
`,
	})
	name := w.create(filepath.Join(dir, "job.yml"))
	w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if !strings.Contains(w.logs(name), "registered") {
		t.Fatalf("the run could not register its crafted manifest; its log:\n%s", w.logs(name))
	}

	out := t.TempDir()
	r := w.run("job", "download", name, "--download-path", out)
	if r.code != 0 {
		t.Fatalf("job download: exit %d, stderr %q; want 0", r.code, r.stderr)
	}
	for _, want := range []string{"warning: skipped outputs/evil -> " + outside, "warning: skipped outputs/up -> ../../../../../../../../../tmp",
		"warning: skipped outputs/via -> evil/x"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("job download's stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	base := filepath.Join(out, name, "artifacts", "outputs")
	if got := readFile(t, filepath.Join(base, "ok.txt")); got != "forged but harmless\n" {
		t.Errorf("outputs/ok.txt reads %q", got)
	}
	for _, p := range []string{"evil", "up", "via"} {
		if _, err := os.Lstat(filepath.Join(base, p)); err == nil {
			t.Errorf("outputs/%s was downloaded", p)
		}
	}
	if des, err := os.ReadDir(outside); err != nil || len(des) > 0 {
		t.Errorf("the folder the link named outside the download holds %d entries (%v), want none", len(des), err)
	}
	noNodeFiles(t, out)
}

// noNodeFiles fails if anything under dir is a link out of it, or holds a line of the node's
// /etc/passwd.
func noNodeFiles(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err == nil && !strings.HasPrefix(target, dir+string(filepath.Separator)) {
				t.Errorf("%s links outside the download, to %s", p, target)
			}
			return nil
		}
		if d.Type().IsRegular() && strings.Contains(readFile(t, p), "root:x:0:0") {
			t.Errorf("%s holds the node's /etc/passwd", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
