package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

const testImage = "localhost/hangar-busybox:latest"

// requireContainers needs podman with the test image (scripts/setup/containers.sh makes both).
func requireContainers(t *testing.T) {
	t.Helper()
	// A real run, not just the image's presence: podman needs runc and lowered ulimits on this
	// kind of machine (CONTAINERS_CONF from scripts/setup/containers.sh).
	out, err := exec.Command("podman", "run", "--rm", testImage, "true").CombinedOutput()
	if err == nil {
		return
	}
	err = fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	if os.Getenv("CI") != "" {
		t.Fatalf("podman with %s is required in CI (run scripts/setup/containers.sh and export CONTAINERS_CONF): %v", testImage, err)
	}
	t.Skipf("no podman with %s: %v", testImage, err)
}

// On a node with a container runtime, image: runs the command inside the image with the code,
// inputs and outputs mounted; cancel stops the container.
func TestContainerImage(t *testing.T) {
	requireContainers(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"src/hello.txt": "from the snapshot",
		"data/in.txt":   "from an input",
		"job.yml": `command: |
  busybox | head -1
  cat hello.txt
  cat ${{inputs.data}}
  echo "var=$GREETING run=$HANGAR_RUN_ID"
  echo made > outputs/made.txt
  echo model > ${{outputs.model}}/m.txt
code: src
inputs:
  data: {type: uri_file, path: data/in.txt}
outputs:
  model: {type: uri_folder}
environment_variables: {GREETING: hi}
environment:
  image: ` + testImage + "\n",
		"long.yml": "command: trap 'echo got TERM; exit 143' TERM; echo started; while true; do sleep 0.1; done\nenvironment:\n  image: " + testImage + "\n",
	})
	r := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream", "--name", "ctr")
	for _, want := range []string{"BusyBox", "from the snapshot", "from an input", "var=hi run=ctr"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("log lacks %q:\n%s", want, r.stdout)
		}
	}
	if d := w.show("ctr"); len(d.Warnings) != 0 {
		t.Errorf("warnings on a container run: %q", d.Warnings)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", "ctr", "--all", "--download-path", out)
	if got := readFile(t, filepath.Join(out, "ctr", "artifacts", "outputs", "made.txt")); got != "made\n" {
		t.Errorf("outputs/made.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(out, "ctr", "named-outputs", "model", "m.txt")); got != "model\n" {
		t.Errorf("named output = %q", got)
	}

	name := w.create(filepath.Join(dir, "long.yml"))
	testwait.Within(t, 30*time.Second, "the container to start", func() bool { return logHas(w, name, "started") })
	w.ok("job", "cancel", "-n", name, "--yes")
	d := w.waitStatus(name, time.Minute, job.Canceled, job.Failed, job.Completed)
	if d.Status != job.Canceled || !logHas(w, name, "got TERM") {
		t.Errorf("status %s; log %q", d.Status, w.logs(name))
	}
	if out, _ := exec.Command("podman", "ps", "-a", "--format", "{{.Names}}").Output(); strings.Contains(string(out), "hangar-"+name) {
		t.Errorf("container left behind: %s", out)
	}
}

// image: plus a conda file: the environment is built with the image's python, once, in the node's
// cache, and the command runs in the image with it.
func TestContainerImageWithCondaFile(t *testing.T) {
	requireContainers(t)
	const image = "localhost/hangar-python:latest"
	if err := exec.Command("podman", "image", "exists", image).Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI (scripts/setup/containers.sh)", image)
		}
		t.Skipf("no %s", image)
	}
	w := newWSEnv(t, wheelhouse(t))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"conda.yml": "dependencies:\n  - python=3\n  - pip:\n    - tinypkg==1.0\n",
		"job.yml": "command: python -c \"import tinypkg, sys, os; print('value', tinypkg.VALUE, sys.executable, 'host' if os.path.exists('/usr/bin/dpkg') else 'in-image')\"\n" +
			"environment:\n  image: " + image + "\n  conda_file: conda.yml\n",
	})
	first := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	if !strings.Contains(first.stdout, "Building environment") || !strings.Contains(first.stdout, "value 42") ||
		!strings.Contains(first.stdout, "in-image") {
		t.Fatalf("first run:\n%s", first.stdout)
	}
	second := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	if !strings.Contains(second.stdout, "Using cached environment") || !strings.Contains(second.stdout, "value 42") {
		t.Errorf("second run:\n%s", second.stdout)
	}
}
