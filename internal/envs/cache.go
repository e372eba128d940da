package envs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
	"time"
)

// readyFile marks a complete environment; its mtime is the last use (for LRU eviction).
const readyFile = ".hangar-ready"

// Cache holds built environments on a node, one folder per key.
type Cache struct {
	Dir string
	// MaxBytes bounds the cache; least recently used environments not in use are evicted above it
	// (0 = no limit).
	MaxBytes int64
	// Finder finds the interpreter on the node; Interpreters, when set, finds it elsewhere (in an
	// image) instead.
	Finder       Finder
	Interpreters Locator
	// Builder builds environments; nil means VenvBuilder.
	Builder Builder
	// Now is the clock (injectable for tests).
	Now func() time.Time
}

// Meta is what the ready marker records about an environment.
type Meta struct {
	Key          string      `json:"key"`
	Spec         Spec        `json:"spec"`
	Python       Interpreter `json:"python"`
	SizeBytes    int64       `json:"size_bytes"`
	BuiltAt      time.Time   `json:"built_at"`
	BuildSeconds float64     `json:"build_seconds"`
}

// Env is an environment ready for use; Release it when the run ends (it is not evicted while held).
type Env struct {
	Dir    string
	Meta   Meta
	Cached bool // reused without building
	Waited bool // another run built it while this one waited
	lock   *os.File
}

// Release lets the environment be evicted again.
func (e *Env) Release() {
	if e != nil && e.lock != nil {
		e.lock.Close()
		e.lock = nil
	}
}

// BinDir is the folder to put first on PATH.
func (e *Env) BinDir() string { return filepath.Join(e.Dir, "bin") }

// Builder builds an environment into dir (which does not exist yet), writing its output to out.
type Builder interface {
	Build(ctx context.Context, dir string, s Spec, py Interpreter, out io.Writer) error
}

// Platform names the node's platform for cache keys.
func Platform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// Ensure returns the environment for s, building it first unless a ready copy exists. Concurrent
// callers (in any process on the node) build it once: the others wait and say so on out. A failed
// build leaves nothing behind.
func (c *Cache) Ensure(ctx context.Context, s Spec, out io.Writer) (*Env, error) {
	var loc Locator = c.Finder
	if c.Interpreters != nil {
		loc = c.Interpreters
	}
	py, err := loc.Find(ctx, s.Python)
	if err != nil {
		return nil, err
	}
	key := s.Key(Platform(), py)
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("environment cache: %w", err)
	}
	dir := filepath.Join(c.Dir, key[:32])
	f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("environment lock: %w", err)
	}
	env, err := c.acquire(ctx, f, dir, key, s, py, out)
	if err != nil {
		f.Close()
		return nil, err
	}
	return env, nil
}

// acquire returns the environment holding a shared lock on it (users share it; eviction needs it
// exclusively). A missing environment is built under the exclusive lock, which makes concurrent
// callers wait (and say so) instead of building twice.
func (c *Cache) acquire(ctx context.Context, f *os.File, dir, key string, s Spec, py Interpreter, out io.Writer) (*Env, error) {
	waited := false
	for {
		ok, err := tryLock(f, syscall.LOCK_SH)
		if err != nil {
			return nil, err
		}
		if ok {
			if m, ready := readMeta(dir); ready {
				c.touch(dir)
				fmt.Fprintf(out, "Using cached environment %s (python %s, built %s)\n", key[:12], m.Python.Version, m.BuiltAt.Format(time.RFC3339))
				return &Env{Dir: dir, Meta: m, Cached: true, Waited: waited, lock: f}, nil
			}
			// Not built: try to become its builder.
			if ok, err := tryLock(f, syscall.LOCK_EX); err != nil {
				return nil, err
			} else if ok {
				if m, ready := readMeta(dir); ready { // built meanwhile
					return &Env{Dir: dir, Meta: m, Cached: true, Waited: waited, lock: f}, shared(f)
				}
				env := &Env{Dir: dir, Waited: waited, lock: f}
				if err := c.build(ctx, dir, key, s, py, out, env); err != nil {
					return nil, err
				}
				if err := shared(f); err != nil {
					return nil, err
				}
				c.evict(out, dir)
				return env, nil
			}
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
		if !waited {
			fmt.Fprintf(out, "Waiting for environment %s: another run is building it\n", key[:12])
			waited = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(50+rand.IntN(100)) * time.Millisecond): // jitter: no lockstep
		}
	}
}

// tryLock takes a flock without blocking; false when someone else holds a conflicting one.
func tryLock(f *os.File, how int) (bool, error) {
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return false, fmt.Errorf("environment lock: %w", err)
}

func (c *Cache) build(ctx context.Context, dir, key string, s Spec, py Interpreter, out io.Writer, env *Env) error {
	_ = os.RemoveAll(dir) // what a crashed build left
	start := c.now()
	fmt.Fprintf(out, "Building environment %s with python %s (%s)\n", key[:12], py.Version, py.Path)
	b := c.Builder
	if b == nil {
		b = VenvBuilder{}
	}
	if err := b.Build(ctx, dir, s, py, out); err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	m := Meta{Key: key, Spec: s, Python: py, SizeBytes: dirSize(dir), BuiltAt: start.UTC(),
		BuildSeconds: c.now().Sub(start).Seconds()}
	b2, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, readyFile), b2, 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("mark environment ready: %w", err)
	}
	fmt.Fprintf(out, "Built environment %s in %.1fs (%d MB)\n", key[:12], m.BuildSeconds, m.SizeBytes>>20)
	env.Meta = m
	return nil
}

// shared turns the exclusive lock into a shared one: other runs may use the environment, the
// evictor may not remove it.
func shared(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		return fmt.Errorf("environment lock: %w", err)
	}
	return nil
}

func readMeta(dir string) (Meta, bool) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, readyFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return m, false
	}
	return m, true
}

func (c *Cache) touch(dir string) {
	t := c.now()
	_ = os.Chtimes(filepath.Join(dir, readyFile), t, t)
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// evict removes least recently used environments that no run holds until the cache fits MaxBytes.
// keep is never removed.
func (c *Cache) evict(out io.Writer, keep string) {
	if c.MaxBytes <= 0 {
		return
	}
	type entry struct {
		dir  string
		used time.Time
		size int64
	}
	var all []entry
	var total int64
	matches, _ := filepath.Glob(filepath.Join(c.Dir, "*", readyFile))
	for _, m := range matches {
		st, err := os.Stat(m)
		meta, ok := readMeta(filepath.Dir(m))
		if err != nil || !ok {
			continue
		}
		all = append(all, entry{filepath.Dir(m), st.ModTime(), meta.SizeBytes})
		total += meta.SizeBytes
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
	for _, e := range all {
		if total <= c.MaxBytes {
			return
		}
		if e.dir == keep || !c.remove(e.dir) {
			continue
		}
		total -= e.size
		fmt.Fprintf(out, "Evicted environment %s (%d MB, last used %s) to keep the cache under %d MB\n",
			filepath.Base(e.dir), e.size>>20, e.used.Format(time.RFC3339), c.MaxBytes>>20)
	}
}

// remove deletes an environment unless a run holds it.
func (c *Cache) remove(dir string) bool {
	f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	trash := dir + ".evicting"
	if err := os.Rename(dir, trash); err != nil {
		return false
	}
	return os.RemoveAll(trash) == nil
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
