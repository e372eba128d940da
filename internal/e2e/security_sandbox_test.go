package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// procScan is a run that looks for a way out through /proc, as an attacker would: every ancestor
// and every process it can see, each one's root, environment and working directory, for the
// workspace's token and another run's secret.
const procScan = `import os, sys
home, token, secret = sys.argv[1], sys.argv[2], sys.argv[3]
found, seen, ancestors = [], [], []
pid = os.getpid()
while pid > 1:
    with open("/proc/%d/status" % pid) as f:
        pid = int([l.split()[1] for l in f if l.startswith("PPid:")][0])
    ancestors.append(pid)
for p in sorted(set(os.listdir("/proc")) - {"self", "thread-self"}):
    if not p.isdigit() or int(p) == os.getpid():  # its own environment holds its inputs
        continue
    seen.append(p)
    for path in ["/proc/%s/root%s/token" % (p, home), "/proc/%s/cwd/token" % p, "/proc/%s/cwd/../../token" % p]:
        try:
            if token in open(path).read():
                found.append("token via " + path)
        except OSError:
            pass
    try:
        env = open("/proc/%s/environ" % p, "rb").read().decode(errors="replace")
        if secret in env:
            found.append("secret in /proc/%s/environ" % p)
        if token in env:
            found.append("token in /proc/%s/environ" % p)
    except OSError:
        pass
try:
    if token in open(home + "/token").read():
        found.append("token directly")
except OSError:
    pass
print("UID", os.getuid())
print("ANCESTORS", ancestors)
print("SEEN", len(seen), seen)
print("FOUND", found)
`

// A run looks for the workspace's token and another live run's secret through every /proc entry
// it can see (issue 27: on a root server, /proc/<bubblewrap>/root led to the home, and other
// runs' environments were readable). It sees its own processes only, finds nothing, and on a
// server run by root it is not root.
func TestSecurityRunCannotEscapeThroughProc(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	token := strings.TrimSpace(readFile(t, filepath.Join(w.home, "token")))
	const secret = "s3cret-of-the-other-run-7f1c"
	w.runStdin(secret+"\n", "secret", "set", "other_key")
	writeFiles(t, dir, map[string]string{
		"scan.py":   procScan,
		"other.yml": "command: sleep 300\nenvironment_variables:\n  KEY: ${{secrets.other_key}}\n",
		"scan.yml": "command: python3 scan.py ${{inputs.wsdir}} ${{inputs.token}} ${{inputs.secret}}\ncode: .\ninputs:\n" +
			"  wsdir: " + w.home + "\n  token: " + token + "\n  secret: " + secret + "\n",
	})
	other := w.create(filepath.Join(dir, "other.yml"))
	w.waitStatus(other, 90*time.Second, job.Running)
	name := w.create(filepath.Join(dir, "scan.yml"))
	d := w.waitStatus(name, 90*time.Second, job.Completed, job.Failed)
	log := w.logs(name)
	if d.Status != job.Completed || !strings.Contains(log, "FOUND []") {
		t.Fatalf("the run found a way out (%s):\n%s", d.Status, log)
	}
	// Its own few processes: bash, python, and the namespace's own; not the machine's hundreds.
	if i := strings.Index(log, "SEEN "); i < 0 || len(strings.Fields(log[i:])[1]) > 1 {
		t.Errorf("the run sees more than its own processes:\n%s", log)
	}
	if os.Geteuid() == 0 && w.account == nil && strings.Contains(log, "UID 0\n") {
		t.Errorf("on a server run by root, the run runs as root:\n%s", log)
	}
	if w.account != nil && !strings.Contains(log, fmt.Sprintf("UID %d\n", w.account.uid)) {
		t.Errorf("on a server run by %s, the run runs as another user:\n%s", w.account.name, log)
	}
	w.ok("job", "cancel", "-n", other, "--yes")
}

// A requirement that is a local package with its own build backend runs that code when pip
// builds it (issue 27: it read the workspace token from outside the sandbox). It runs in the
// run's box: the workspace's home is not there, none of its variables are, and the run shows
// what happened.
func TestSecurityEnvironmentBuildRunsInTheSandbox(t *testing.T) {
	requireTool(t, "python3")
	w := newWSEnv(t, []string{"PIP_NO_INDEX=1", "PIP_CONFIG_FILE=" + os.DevNull})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"pkg/pyproject.toml": "[build-system]\nrequires = []\nbuild-backend = \"evilbackend\"\nbackend-path = [\".\"]\n\n" +
			"[project]\nname = \"evil\"\nversion = \"1.0\"\n",
		"pkg/evilbackend.py": `import os
home = os.environ.get("HANGAR_HOME") or ` + "\"" + w.home + "\"" + `
try:
    print("EVIL READ", open(os.path.join(home, "token")).read().strip(), flush=True)
except OSError as e:
    print("EVIL DENIED", e.errno, "uid", os.getuid(), "env", sorted(k for k in os.environ if k.startswith("HANGAR_")), flush=True)
raise SystemExit("evil backend: done looking")
`,
		"req.txt":   "./pkg\n",
		"job.yml":   "command: echo never\ncode: .\nenvironment:\n  conda_file: conda.yml\n",
		"conda.yml": "dependencies:\n  - python=3\n  - pip\n  - pip:\n    - ./pkg\n",
	})
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 3*time.Minute, job.Completed, job.Failed)
	log := w.logs(name)
	token := strings.TrimSpace(readFile(t, filepath.Join(w.home, "token")))
	if strings.Contains(log, token) || strings.Contains(log, "EVIL READ") {
		t.Fatalf("the build read the workspace token:\n%s", log)
	}
	// HANGAR_BOX is the box's marker (how its processes are found and ended), not a credential.
	if !strings.Contains(log, "EVIL DENIED 2") || !strings.Contains(log, "env ['HANGAR_BOX']") {
		t.Errorf("the backend did not run where the home is hidden and no HANGAR_ variable but the box's marker is set:\n%s", log)
	}
	if d.Status != job.Failed || !strings.Contains(d.StatusReason, "environment build failed") {
		t.Errorf("status %s (%s), want Failed with the build's reason", d.Status, d.StatusReason)
	}
}
