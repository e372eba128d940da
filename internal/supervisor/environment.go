package supervisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/envs"
	"github.com/hangar-ml/hangar/internal/node"
)

// setup makes the job's environment ready on this node: a managed Python environment
// from the node's cache (built first when missing, with its output in the run's log and in
// system_logs/env_build.txt), or the user's own interpreter. It records how long that took.
func (s *runEnvironment) setup(ctx context.Context, w *workspace, extra map[string]string, log io.Writer) error {
	spec, err := envs.FromEnvironment(s.spec.Spec.Environment)
	if err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	if spec.Image != "" && spec.Image == s.cfg.InImage {
		spec.Image = "" // this supervisor already runs in it (a Kubernetes pod)
	}
	if spec.Image != "" {
		rt := node.ContainerRuntime()
		if rt == "" {
			s.warn(fmt.Sprintf("environment image %q not used: this node has no container runtime (docker or podman), so the command ran in the host environment", spec.Image))
		} else {
			w.container = &container{rt: rt, name: "hangar-" + s.cfg.RunID, image: spec.Image}
			start := time.Now()
			err := w.container.pull(ctx, log)
			s.timing("image", time.Since(start))
			if err != nil {
				return err
			}
			if spec.Kind == envs.Managed {
				return s.managed(ctx, w, spec, extra, log)
			}
			return nil
		}
	}
	if isMLflowNoCode(s.spec.Spec) && spec.Image == "" { // modelenv.go
		return s.modelEnvironment(ctx, w, extra, log)
	}
	switch spec.Kind {
	case envs.User:
		if spec.Interpreter == "" {
			return nil
		}
		return s.interpreterShim(w, spec.Interpreter)
	case envs.Managed:
		return s.managed(ctx, w, spec, extra, log)
	}
	return nil
}

func (s *runEnvironment) managed(ctx context.Context, w *workspace, spec envs.Spec, extra map[string]string, log io.Writer) error {
	start := time.Now()
	defer func() { s.timing("environment", time.Since(start)) }()
	f, err := os.OpenFile(filepath.Join(s.cfg.Dir, SystemLogsDir, "env_build.txt"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	out := io.MultiWriter(log, f)
	cache := &envs.Cache{Dir: s.dir(), MaxBytes: s.cacheMax()}
	if w.container != nil { // built with the image's python, used inside the image
		cache.Interpreters = envs.ImageFinder{Runtime: w.container.rt, Image: spec.Image}
		cache.Builder = envs.ImageBuilder{Runtime: w.container.rt, Image: spec.Image}
	} else { // built and probed in the run's box, as the run user where there is one
		r := runner{w: w}
		cache.Finder, cache.Builder = envs.Finder{Runner: r}, envs.VenvBuilder{Runner: r}
		if err := s.giveCache(w); err != nil {
			return err
		}
	}
	env, err := cache.Ensure(ctx, spec, out)
	if err != nil {
		fmt.Fprintf(out, "hangar: environment build failed: %v\n", err)
		return fmt.Errorf("environment build failed: %w", err)
	}
	w.env = env
	w.pathPrefix = append(w.pathPrefix, env.BinDir())
	extra["VIRTUAL_ENV"] = env.Dir
	return nil
}

// interpreterShim puts `python` and `python3` for the user's interpreter first on PATH.
func (s *runEnvironment) interpreterShim(w *workspace, interpreter string) error {
	st, err := os.Stat(interpreter)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("environment interpreter_path %s is not an executable file on this node", interpreter)
	}
	dir := filepath.Join(s.cfg.Dir, "hangar", "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"python", "python3"} {
		link := filepath.Join(dir, name)
		_ = os.Remove(link)
		if err := os.Symlink(interpreter, link); err != nil {
			return err
		}
	}
	w.pathPrefix = append(w.pathPrefix, dir, filepath.Dir(interpreter))
	return nil
}

// dir is the node's environment cache.
func (s *runEnvironment) dir() string {
	if s.cfg.EnvDir != "" {
		return s.cfg.EnvDir
	}
	return filepath.Join(filepath.Dir(s.cfg.CacheDir), "envs")
}

// cacheMax is the cache's size limit: HANGAR_ENV_CACHE_MAX_BYTES on the node, else the workspace's.
func (s *runEnvironment) cacheMax() int64 {
	if v, err := strconv.ParseInt(os.Getenv("HANGAR_ENV_CACHE_MAX_BYTES"), 10, 64); err == nil {
		return v
	}
	return s.spec.EnvCacheMaxBytes
}

// timing records the duration of work inside a phase; it goes with the next status report.
func (s *Supervisor) timing(name string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timings == nil {
		s.timings = map[string]float64{}
	}
	s.timings[name] += d.Seconds()
}

func (s *Supervisor) takeTimings() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.timings
	s.timings = nil
	return t
}

// giveCache lets the run user make new environments in the node's cache (the folder itself, not
// the environments other runs built: they stay as they are, readable).
func (s *runEnvironment) giveCache(w *workspace) error {
	u := w.box.User()
	if u == nil {
		return nil
	}
	if err := os.MkdirAll(s.dir(), 0o755); err != nil {
		return fmt.Errorf("environment cache: %w", err)
	}
	if err := os.Lchown(s.dir(), u.UID, u.GID); err != nil {
		return fmt.Errorf("environment cache: give it to %s: %w", u, err)
	}
	return nil
}
