package envs

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

// countingBuilder counts real builds.
type countingBuilder struct {
	n     atomic.Int32
	inner Builder
}

func (c *countingBuilder) Build(ctx context.Context, dir string, s Spec, py Interpreter, out io.Writer) error {
	c.n.Add(1)
	return c.inner.Build(ctx, dir, s, py, out)
}

// requirePython fails in CI and skips elsewhere when no python3 is found.
func requirePython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is required in CI")
		}
		t.Skip("python3 not found")
	}
}

// offlinePip points pip at a local wheelhouse only.
func offlinePip(t *testing.T, wheelhouse string) {
	t.Setenv("PIP_NO_INDEX", "1")
	t.Setenv("PIP_FIND_LINKS", wheelhouse)
	t.Setenv("PIP_CONFIG_FILE", os.DevNull)
}

func spec(t *testing.T, conda string) Spec {
	t.Helper()
	s, err := FromEnvironment(job.Environment{CondaSpec: conda})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A real pip install from a local wheelhouse: first builds, second reuses without running pip,
// a changed spec rebuilds, concurrent callers build once, a failed build is not cached.
func TestEnsureBuildsOnceAndReuses(t *testing.T) {
	requirePython(t)
	wheels := t.TempDir()
	buildWheel(t, wheels, "tinypkg", "1.0", "42")
	buildWheel(t, wheels, "otherpkg", "2.0", "7")
	offlinePip(t, wheels)
	b := &countingBuilder{inner: VenvBuilder{}}
	c := &Cache{Dir: t.TempDir(), Builder: b}
	ctx := t.Context()
	s := spec(t, "dependencies:\n  - python=3\n  - pip\n  - pip:\n    - tinypkg==1.0\n")

	var out bytes.Buffer
	env, err := c.Ensure(ctx, s, &out)
	if err != nil {
		t.Fatalf("first build: %v\n%s", err, out.String())
	}
	if env.Cached || b.n.Load() != 1 {
		t.Fatalf("first Ensure: cached %v, builds %d", env.Cached, b.n.Load())
	}
	got, err := exec.Command(filepath.Join(env.BinDir(), "python"), "-c", "import tinypkg; print(tinypkg.VALUE)").Output()
	if err != nil || strings.TrimSpace(string(got)) != "42" {
		t.Fatalf("import tinypkg: %q, %v", got, err)
	}
	env.Release()

	out.Reset()
	env2, err := c.Ensure(ctx, s, &out)
	if err != nil || !env2.Cached || b.n.Load() != 1 || env2.Dir != env.Dir {
		t.Fatalf("second Ensure: %v cached %v builds %d", err, env2 != nil && env2.Cached, b.n.Load())
	}
	if strings.Contains(out.String(), "pip install") {
		t.Errorf("second Ensure ran pip:\n%s", out.String())
	}
	env2.Release()

	changed := spec(t, "dependencies:\n  - pip:\n    - tinypkg==1.0\n    - otherpkg\n")
	env3, err := c.Ensure(ctx, changed, io.Discard)
	if err != nil || env3.Cached || b.n.Load() != 2 || env3.Dir == env.Dir {
		t.Fatalf("changed spec: %v, builds %d", err, b.n.Load())
	}
	env3.Release()
}

func TestEnsureConcurrentBuildsOnce(t *testing.T) {
	requirePython(t)
	wheels := t.TempDir()
	buildWheel(t, wheels, "tinypkg", "1.0", "42")
	offlinePip(t, wheels)
	b := &countingBuilder{inner: VenvBuilder{}}
	c := &Cache{Dir: t.TempDir(), Builder: b}
	s := spec(t, "dependencies:\n  - pip:\n    - tinypkg\n")
	var wg sync.WaitGroup
	envs := make([]*Env, 3)
	outs := make([]bytes.Buffer, 3)
	errs := make([]error, 3)
	for i := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			envs[i], errs[i] = c.Ensure(t.Context(), s, &outs[i])
		}()
	}
	wg.Wait()
	waited := 0
	for i, e := range envs {
		if errs[i] != nil {
			t.Fatalf("Ensure %d: %v\n%s", i, errs[i], outs[i].String())
		}
		if e.Waited {
			waited++
			if !strings.Contains(outs[i].String(), "Waiting for environment") {
				t.Errorf("a waiter did not say so: %q", outs[i].String())
			}
		}
		e.Release()
	}
	if b.n.Load() != 1 || waited == 0 {
		t.Errorf("builds = %d, waiters = %d; want 1 build and at least one waiter", b.n.Load(), waited)
	}
}

func TestFailedBuildIsNotCached(t *testing.T) {
	requirePython(t)
	offlinePip(t, t.TempDir()) // an empty wheelhouse
	b := &countingBuilder{inner: VenvBuilder{}}
	c := &Cache{Dir: t.TempDir(), Builder: b}
	s := spec(t, "dependencies:\n  - pip:\n    - no-such-package-hangar==9.9\n")
	for i := 1; i <= 2; i++ {
		var out bytes.Buffer
		_, err := c.Ensure(t.Context(), s, &out)
		if err == nil {
			t.Fatalf("attempt %d: a missing package built", i)
		}
		if !strings.Contains(err.Error(), "no-such-package-hangar") {
			t.Errorf("attempt %d: error %q does not name the package", i, err)
		}
		if !strings.Contains(out.String(), "ERROR") {
			t.Errorf("attempt %d: pip's error is not in the output:\n%s", i, out.String())
		}
		if int(b.n.Load()) != i {
			t.Errorf("attempt %d: builds = %d (a failed build was reused)", i, b.n.Load())
		}
	}
	entries, _ := filepath.Glob(filepath.Join(c.Dir, "*", readyFile))
	if len(entries) != 0 {
		t.Errorf("a failed build left a ready environment: %v", entries)
	}
}

func TestMissingPythonVersionIsClear(t *testing.T) {
	requirePython(t)
	c := &Cache{Dir: t.TempDir()}
	_, err := c.Ensure(t.Context(), spec(t, "dependencies:\n  - python=2.7\n"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "python =2.7 is requested") && !strings.Contains(err.Error(), "python 2.7") {
		t.Fatalf("error = %v, want one naming the missing version", err)
	}
}
