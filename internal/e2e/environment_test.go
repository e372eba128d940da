package e2e

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// wheelhouse builds a local wheelhouse with a tiny pure-Python package and returns pip settings
// that install only from it (what an offline or private-index node does).
func wheelhouse(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	name, version := "tinypkg", "1.0"
	info := fmt.Sprintf("%s-%s.dist-info", name, version)
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%s-py3-none-any.whl", name, version)))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	var record strings.Builder
	for _, fl := range [][2]string{
		{name + "/__init__.py", "VALUE = 42\n"},
		{info + "/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"},
		{info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: hangar-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	} {
		w, _ := z.Create(fl[0])
		_, _ = w.Write([]byte(fl[1]))
		sum := sha256.Sum256([]byte(fl[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", fl[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(fl[1]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	w, _ := z.Create(info + "/RECORD")
	_, _ = w.Write([]byte(record.String()))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return []string{"PIP_NO_INDEX=1", "PIP_FIND_LINKS=" + dir, "PIP_CONFIG_FILE=" + os.DevNull}
}

// A conda file's pip dependencies are installed into a managed environment in Preparing, once:
// the next job reuses it; a registered environment resolves by version and @latest.
func TestManagedEnvironment(t *testing.T) {
	requireTool(t, "python3")
	w := newWSEnv(t, wheelhouse(t))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"conda.yml": "name: tiny\ndependencies:\n  - python=3\n  - pip\n  - pip:\n    - tinypkg==1.0\n",
		"job.yml": `command: python -c "import tinypkg, sys; print('value', tinypkg.VALUE); print(sys.prefix)"
environment:
  conda_file: conda.yml
`,
		"env.yml":   "name: tiny\nconda_file: conda.yml\n",
		"byref.yml": "command: python -c \"import tinypkg; print('ref', tinypkg.VALUE)\"\nenvironment: azureml:tiny@latest\n",
		"byver.yml": "command: python -c \"import tinypkg; print('ver', tinypkg.VALUE)\"\nenvironment: azureml:tiny:1\n",
	})
	first := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	if !strings.Contains(first.stdout, "Building environment") || !strings.Contains(first.stdout, "Successfully installed tinypkg-1.0") ||
		!strings.Contains(first.stdout, "value 42") {
		t.Fatalf("first job log:\n%s", first.stdout)
	}
	second := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	if !strings.Contains(second.stdout, "Using cached environment") || strings.Contains(second.stdout, "pip install") {
		t.Errorf("second job rebuilt:\n%s", second.stdout)
	}
	var list []api.RunDetail
	_ = json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &list)
	d := w.show(list[0].ID)
	for _, phase := range []string{"preparing", "environment", "running", "finalizing"} {
		if _, ok := d.Phases[phase]; !ok {
			t.Errorf("job show has no %s phase: %v", phase, d.Phases)
		}
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", list[1].ID, "--download-path", out)
	if b := readFile(t, filepath.Join(out, list[1].ID, "artifacts", "system_logs", "env_build.txt")); !strings.Contains(b, "Successfully installed") {
		t.Errorf("system_logs/env_build.txt = %q", b)
	}

	r := w.ok("environment", "create", "-f", filepath.Join(dir, "env.yml"), "-o", "json")
	var ev api.EnvironmentVersion
	if err := json.Unmarshal([]byte(r.stdout), &ev); err != nil || ev.Version != "1" {
		t.Fatalf("environment create: %s %v", r.stdout, err)
	}
	w.ok("environment", "create", "-f", filepath.Join(dir, "env.yml")) // version 2
	if r := w.ok("environment", "list"); !strings.Contains(r.stdout, "tiny") || !strings.Contains(r.stdout, "2") {
		t.Errorf("environment list: %s", r.stdout)
	}
	if r := w.ok("environment", "show", "-n", "tiny", "-o", "json"); !strings.Contains(r.stdout, `"version": "2"`) {
		t.Errorf("environment show (latest): %s", r.stdout)
	}
	for file, want := range map[string]string{"byref.yml": "ref 42", "byver.yml": "ver 42"} {
		r := w.ok("job", "create", "-f", filepath.Join(dir, file), "--stream")
		if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "Using cached environment") {
			t.Errorf("%s: log %q", file, r.stdout)
		}
	}
	writeFiles(t, dir, map[string]string{"missing.yml": "command: echo\nenvironment: azureml:nope:3\n"})
	if r := w.run("job", "create", "-f", filepath.Join(dir, "missing.yml")); r.code == 0 || !strings.Contains(r.stderr, "no environment nope version 3") {
		t.Errorf("unknown environment: exit %d, %s", r.code, r.stderr)
	}
}

// An unknown package fails the run in Preparing with pip's error in the log and a one-line reason;
// nothing half-built is reused by the next attempt.
func TestEnvironmentBuildFailure(t *testing.T) {
	requireTool(t, "python3")
	w := newWSEnv(t, wheelhouse(t))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"job.yml": "command: echo never\nenvironment:\n  conda_file:\n    dependencies:\n      - pip:\n        - no-such-package-hangar==1.0\n",
	})
	for attempt := 1; attempt <= 2; attempt++ {
		r := w.run("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
		if r.code != 3 {
			t.Fatalf("attempt %d: exit %d, want 3 (Failed)\n%s", attempt, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "No matching distribution found for no-such-package-hangar") || strings.Contains(r.stdout, "never") {
			t.Errorf("attempt %d: log lacks pip's error:\n%s", attempt, r.stdout)
		}
		if attempt == 2 && strings.Contains(r.stdout, "Using cached environment") {
			t.Errorf("a failed build was reused")
		}
	}
	var list []api.RunDetail
	_ = json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &list)
	d := w.show(list[0].ID)
	if d.Status != job.Failed || !strings.Contains(d.Error, "environment build failed") || strings.Contains(d.Error, "\n") {
		t.Errorf("status %s, error %q", d.Status, d.Error)
	}
	var sawRunning bool
	for _, e := range d.Events {
		sawRunning = sawRunning || e.To == job.Running
	}
	if sawRunning {
		t.Errorf("a run whose environment failed reached Running: %+v", d.Events)
	}

	writeFiles(t, dir, map[string]string{
		"conda.yml":     "dependencies:\n  - python=3\n  - conda-forge: [numpy]\n",
		"malformed.yml": "command: echo never\nenvironment:\n  conda_file: conda.yml\n",
	})
	r := w.run("job", "create", "-f", filepath.Join(dir, "malformed.yml"), "--stream")
	if r.code != 3 || !strings.Contains(r.stderr, "conda_file: dependencies[1]") {
		t.Errorf("malformed conda file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A curated Azure ML environment runs in the workspace's mapping of it, with a warning naming it
// (curated_test.go); interpreter_path uses that interpreter as is.
func TestCuratedAndUserManagedEnvironments(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	py, err := filepath.Abs(pythonPath(t))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"curated.yml": "command: echo curated\nenvironment: azureml:AzureML-sklearn-1.5@latest\n",
		"interp.yml":  fmt.Sprintf("command: python -c 'import sys; print(sys.executable)'\nenvironment:\n  interpreter_path: %s\n", py),
	})
	name := w.create(filepath.Join(dir, "curated.yml"))
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed)
	if d.Status != job.Completed || len(d.Warnings) == 0 || !strings.Contains(d.Warnings[0], "AzureML-sklearn-1.5") {
		t.Errorf("curated: status %s warnings %q", d.Status, d.Warnings)
	}
	r := w.ok("job", "create", "-f", filepath.Join(dir, "interp.yml"), "--stream")
	if !strings.Contains(r.stdout, "hangar/bin/python") {
		t.Errorf("interpreter_path: python was %q", r.stdout)
	}
}

func pythonPath(t *testing.T) string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no python3 at a fixed path")
	return ""
}
