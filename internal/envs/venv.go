package envs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// VenvBuilder builds with `python -m venv` and pip (or uv when it is on PATH); conda dependencies
// need conda, mamba or micromamba on the node. pip reads the node's own configuration (pip.conf,
// PIP_INDEX_URL, PIP_FIND_LINKS), so private indexes and offline wheelhouses work. Every command
// it runs goes through Runner (nil: straight on the node).
type VenvBuilder struct {
	Runner Runner
}

// Build creates the environment in dir.
func (b VenvBuilder) Build(ctx context.Context, dir string, s Spec, py Interpreter, out io.Writer) error {
	r := runnerOr(b.Runner)
	if len(s.Conda) > 0 {
		return condaBuild(ctx, r, dir, s, py, out)
	}
	if uv, err := exec.LookPath("uv"); err == nil {
		return uvBuild(ctx, r, uv, dir, s, py, out)
	}
	if err := run(ctx, r, out, py.Path, "-m", "venv", dir); err != nil {
		return fmt.Errorf("create virtual environment: %w", err)
	}
	return pipInstall(ctx, r, filepath.Join(dir, "bin", "python"), dir, s.Pip, out)
}

func pipInstall(ctx context.Context, r Runner, python, dir string, reqs []string, out io.Writer) error {
	if len(reqs) == 0 {
		return nil
	}
	req := filepath.Join(dir, "hangar-requirements.txt")
	if err := os.WriteFile(req, []byte(strings.Join(reqs, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := run(ctx, r, out, python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
		"--progress-bar", "off", "-r", req); err != nil {
		return fmt.Errorf("pip install: %w", err)
	}
	return nil
}

func uvBuild(ctx context.Context, r Runner, uv, dir string, s Spec, py Interpreter, out io.Writer) error {
	if err := run(ctx, r, out, uv, "venv", "--python", py.Path, dir); err != nil {
		return fmt.Errorf("uv venv: %w", err)
	}
	if len(s.Pip) == 0 {
		return nil
	}
	args := append([]string{"pip", "install", "--python", filepath.Join(dir, "bin", "python")}, s.Pip...)
	if err := run(ctx, r, out, uv, args...); err != nil {
		return fmt.Errorf("uv pip install: %w", err)
	}
	return nil
}

// condaBuild creates a conda environment at dir with the conda dependencies, then pip installs.
func condaBuild(ctx context.Context, r Runner, dir string, s Spec, py Interpreter, out io.Writer) error {
	var conda string
	for _, name := range []string{"micromamba", "mamba", "conda"} {
		if p, err := exec.LookPath(name); err == nil {
			conda = p
			break
		}
	}
	if conda == "" {
		return fmt.Errorf("conda dependencies %s need conda, mamba or micromamba on this node; list them under pip: instead, or install one",
			strings.Join(s.Conda, ", "))
	}
	args := []string{"create", "--yes", "--prefix", dir}
	for _, ch := range s.Channels {
		args = append(args, "--channel", ch)
	}
	pyDep := "python=" + majorMinor(py.Version)
	args = append(append(args, pyDep, "pip"), s.Conda...)
	if err := run(ctx, r, out, conda, args...); err != nil {
		return fmt.Errorf("%s create: %w", filepath.Base(conda), err)
	}
	return pipInstall(ctx, r, filepath.Join(dir, "bin", "python"), dir, s.Pip, out)
}

func majorMinor(v string) string {
	p := strings.Split(v, ".")
	if len(p) >= 2 {
		return p[0] + "." + p[1]
	}
	return v
}

// run runs a build command with its output on out; the error carries the last lines of output
// that look like an error, so that a one-line reason can be shown.
func run(ctx context.Context, r Runner, out io.Writer, name string, args ...string) error {
	fmt.Fprintf(out, "$ %s %s\n", filepath.Base(name), strings.Join(args, " "))
	var tail tailBuffer
	err := r.Run(ctx, io.MultiWriter(out, &tail), append(BuildEnv(), "PIP_NO_INPUT=1", "PYTHONUNBUFFERED=1"), name, args...)
	if err != nil {
		if reason := tail.reason(); reason != "" {
			return fmt.Errorf("%w: %s", err, reason)
		}
		return err
	}
	return nil
}

// tailBuffer keeps the last 64 KB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 64<<10 {
		t.b = t.b[len(t.b)-64<<10:]
	}
	return len(p), nil
}

// reason picks the most telling line: the last "ERROR:" line, else the last non-empty line.
func (t *tailBuffer) reason() string {
	lines := strings.Split(string(bytes.TrimSpace(t.b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "ERROR:") || strings.HasPrefix(l, "error:") {
			return l
		}
	}
	if len(lines) > 0 {
		return strings.TrimSpace(lines[len(lines)-1])
	}
	return ""
}
