package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
)

// requireSklearn needs Debian's scikit-learn in the node's Python (scripts/setup/python.sh).
func requireSklearn(t *testing.T) {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import sklearn").Run() == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("scikit-learn in /usr/bin/python3 is required in CI (scripts/setup/python.sh installs python3-sklearn)")
	}
	t.Skip("no scikit-learn in /usr/bin/python3")
}

// curatedTrain fits a scikit-learn model and says which interpreter `python3` is (the link the
// mapping's interpreter shim makes).
const curatedTrain = `import os, shutil, sys
from sklearn.linear_model import LogisticRegression
X = [[0.0], [1.0], [2.0], [3.0]]
y = [0, 0, 1, 1]
print("accuracy", LogisticRegression().fit(X, y).score(X, y))
p = shutil.which("python3")
print("python3 ->", os.readlink(p) if os.path.islink(p) else p)
`

// A job whose environment is Azure's curated sklearn-1.5 (as 59 of Azure's example files name it)
// runs on a fresh workspace in the default mapping (the node's Python with Debian's
// scikit-learn) and completes; once an owner maps the name to a registered environment, the next
// job runs in that; a contributor's attempt to change a mapping is refused with 403.
func TestCuratedEnvironmentDefaultAndOwnerMapping(t *testing.T) {
	t.Parallel()
	requireSklearn(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"src/train.py": curatedTrain,
		"job.yml": "command: python train.py\ncode: src\n" +
			"environment: azureml://registries/azureml/environments/sklearn-1.5/labels/latest\n",
		"team.yml": "name: team-python\ninterpreter_path: /bin/python3\n",
	})
	run := func() (api.RunDetail, string) {
		t.Helper()
		name := w.create(filepath.Join(dir, "job.yml"))
		d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
		log := w.logs(name)
		if d.Status != job.Completed || !strings.Contains(log, "accuracy 1.0") {
			t.Fatalf("job %s: %s (%s)\n%s", name, d.Status, d.StatusReason, log)
		}
		return d, log
	}
	d, log := run()
	if !strings.Contains(log, "python3 -> /usr/bin/python3") {
		t.Errorf("the default mapping's job did not run on the node's Python:\n%s", log)
	}
	if !slices.ContainsFunc(d.Warnings, func(s string) bool { return strings.Contains(s, "mapping sklearn-*") }) {
		t.Errorf("warnings %q do not name the mapping", d.Warnings)
	}
	if r := w.ok("curated-environment", "list"); !strings.Contains(r.stdout, "sklearn-*") || !strings.Contains(r.stdout, "interpreter /usr/bin/python3") {
		t.Errorf("curated-environment list:\n%s", r.stdout)
	}

	w.ok("environment", "create", "-f", filepath.Join(dir, "team.yml"))
	w.ok("curated-environment", "set", "sklearn-1.5", "--environment", "team-python")
	if _, log := run(); !strings.Contains(log, "python3 -> /bin/python3") {
		t.Errorf("after the owner's mapping the job did not run in team-python (/bin/python3):\n%s", log)
	}

	carl := strings.TrimSpace(w.ok("user", "create", "carl", "--role", "contributor").stdout)
	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	u := w.user(si.URL)
	if r := u.run(carl, "login", "--with-token"); r.code != 0 {
		t.Fatalf("carl's login: exit %d, %s", r.code, r.stderr)
	}
	if r := u.run("", "curated-environment", "set", "sklearn-1.5", "--image", "carls:1"); r.code == 0 || !strings.Contains(r.stderr, "contributor") {
		t.Errorf("carl's set: exit %d, %s; want a refusal naming his role", r.code, r.stderr)
	}
	_, err = api.NewClient(si.URL, carl).Environments.RemoveCurated(t.Context(), "sklearn-1.5")
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
		t.Errorf("carl's remove: %v, want 403", err)
	}
	var ms []api.CuratedEnvironment
	if err := json.Unmarshal([]byte(w.ok("curated-environment", "list", "-o", "json").stdout), &ms); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == "sklearn-1.5" && m.Environment.Ref != "team-python" {
			t.Errorf("carl changed the mapping: %+v", m)
		}
	}
}
