package envs

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ImageFinder finds python3 inside a container image.
type ImageFinder struct {
	Runtime string // podman or docker
	Image   string
}

// Find runs the image once to learn its python3 and checks it against the constraint.
func (f ImageFinder) Find(ctx context.Context, constraint string) (Interpreter, error) {
	out, err := exec.CommandContext(ctx, f.Runtime, "run", "--rm", f.Image, "sh", "-c",
		`p=$(command -v python3) && echo "$p" && "$p" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])'`).CombinedOutput()
	lines := strings.Fields(string(out))
	if err != nil || len(lines) < 2 {
		return Interpreter{}, fmt.Errorf("image %s has no python3 to build the environment with: %s", f.Image, strings.TrimSpace(string(out)))
	}
	py := Interpreter{Path: "image " + f.Image + ": " + lines[len(lines)-2], Version: lines[len(lines)-1]}
	ok, err := Satisfies(py.Version, constraint)
	if err != nil {
		return Interpreter{}, err
	}
	if !ok {
		return Interpreter{}, fmt.Errorf("python %s is requested, but image %s has python %s", constraint, f.Image, py.Version)
	}
	return py, nil
}

// ImageBuilder builds the environment inside the image: the cache folder is mounted at the same
// path, so the virtual environment's paths are valid in every container of that image. pip's
// settings (index, find-links) come from the node's environment; local find-links folders are
// mounted read-only.
type ImageBuilder struct {
	Runtime string
	Image   string
}

// Build creates the virtual environment in dir with the image's python3 and pip-installs into it.
func (b ImageBuilder) Build(ctx context.Context, dir string, s Spec, py Interpreter, out io.Writer) error {
	if len(s.Conda) > 0 {
		return fmt.Errorf("conda dependencies %s inside image %s are not supported yet; list them under pip:", strings.Join(s.Conda, ", "), b.Image)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "hangar-requirements.txt"), []byte(strings.Join(s.Pip, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	args := []string{"run", "--rm", "--network", "host", "-v", filepath.Dir(dir) + ":" + filepath.Dir(dir)}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "PIP_") {
			continue
		}
		args = append(args, "-e", kv)
		if k == "PIP_FIND_LINKS" {
			for _, p := range strings.Fields(v) {
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					args = append(args, "-v", p+":"+p+":ro")
				}
			}
		}
	}
	script := "set -e; python3 -m venv " + dir + "; if [ -n \"$(cat " + dir + "/hangar-requirements.txt)\" ]; then " +
		dir + "/bin/python -m pip install --disable-pip-version-check --no-input --progress-bar off -r " + dir + "/hangar-requirements.txt; fi"
	args = append(args, b.Image, "sh", "-c", script)
	if err := run(ctx, Direct{}, out, b.Runtime, args...); err != nil { // the image is the sandbox
		return fmt.Errorf("build in image %s: %w", b.Image, err)
	}
	return nil
}
