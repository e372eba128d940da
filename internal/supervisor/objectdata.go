package supervisor

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/objstore"
)

// A run's data in object stores (docs/data.md, "Use object-store data in a job"): an input or
// output whose Store the workspace resolved at job create is read or written by this node
// directly, with the credentials of the datastore that holds it, never through the server. The
// supervisor fetches those credentials once (only for a live run, with its run token), redacts
// them from everything the run reports, downloads each input into the run's inputs folder
// through the node's cache before the command starts, and, once the command completed, uploads
// each output's folder before the run's end is reported. What it moved goes to the server as
// counts in the run's timings (api.DataTimings), for job show.

// storeAccess is what the supervisor holds for its run's object-store data.
type storeAccess struct {
	// creds are the credentials of the datastores the run's spec names (loadStoreCredentials).
	creds map[string]datastore.Credentials
}

// storesNamed are the datastores whose credentials the run's inputs and outputs need.
func storesNamed(sp *job.Spec) []string {
	seen := map[string]bool{}
	for _, in := range sp.Inputs {
		if in.Store != nil && in.Store.Datastore != "" && in.Mode != "direct" {
			seen[in.Store.Datastore] = true
		}
	}
	for _, o := range sp.Outputs {
		if o.Store != nil && o.Store.Datastore != "" {
			seen[o.Store.Datastore] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// loadStoreCredentials fetches the credentials of the datastores the run's data is in (none when
// every location is read with the node's own identity), and from then on redacts them from the
// run's log, its reasons and warnings, and the supervisor's own log lines.
func (s *Supervisor) loadStoreCredentials(ctx context.Context, p *pipeline) error {
	if len(storesNamed(&s.spec.Spec)) == 0 {
		return nil
	}
	got, err := retryValue(ctx, s.conn, "fetch datastore credentials", func(ctx context.Context) (map[string]datastore.Credentials, error) {
		return s.conn.c.Runs.DatastoreCredentials(ctx, s.cfg.RunID)
	})
	if err != nil {
		return fmt.Errorf("datastore credentials: %w", err)
	}
	var values []string
	for _, c := range got {
		values = append(values, c.Values()...)
	}
	s.secrets.redactAlso(values, p) // secretenv.go
	s.stores.creds = got
	return nil
}

// credentials are what loc is read or written with: its datastore's, or the zero value (the
// node's own identity) for a location without one.
func (s *Supervisor) credentials(loc datastore.Location) (datastore.Credentials, error) {
	if loc.Datastore == "" {
		return datastore.Credentials{}, nil
	}
	c, ok := s.stores.creds[loc.Datastore]
	if !ok {
		return c, fmt.Errorf("the workspace gave no credentials for datastore %s", loc.Datastore)
	}
	return c, nil
}

// fetchStore downloads input name from its location into dest (through the node's cache) and
// returns the input's value: the folder, or for a uri_file the file in it. In ro_mount (a
// read-only mount is an eager download here) the files are made read-only.
func (s *inputFetcher) fetchStore(ctx context.Context, name string, in job.Input, dest string) (string, error) {
	loc := *in.Store
	cred, err := s.credentials(loc)
	if err != nil {
		return "", err
	}
	b, err := objstore.Open(ctx, loc, cred)
	if err != nil {
		return "", err
	}
	defer b.Close()
	value := dest
	opts := objstore.DownloadOptions{File: in.Type == job.URIFile, Cache: &objstore.Cache{Dir: s.objectCacheDir()},
		ReadOnly: in.Mode == "" || in.Mode == "ro_mount" || in.Mode == "eval_mount", Log: s.log}
	if opts.File {
		value = filepath.Join(dest, path.Base(loc.Path))
	}
	start := time.Now()
	st, err := b.Download(ctx, value, opts)
	if err != nil {
		return "", err
	}
	moved := api.DataMoved{Objects: int64(st.Objects), Bytes: st.Bytes, CachedObjects: int64(st.Cached), CachedBytes: st.CachedBytes}
	s.log.Info("input downloaded from its store", "input", name, "uri", loc.URI(), "objects", moved.Objects, "bytes", moved.Bytes,
		"cached_objects", moved.CachedObjects, "cached_bytes", moved.CachedBytes, "resumed", st.Resumed, "seconds", time.Since(start).Seconds())
	s.count("inputs", name, moved)
	s.pruneObjectCache(opts.Cache)
	return value, nil
}

// pruneObjectCache bounds the node's object cache after a download (docs/data.md, "Disk
// space"). A cache it cannot prune costs disk, not the run: it is logged and the run goes on.
func (s *Supervisor) pruneObjectCache(c *objstore.Cache) {
	limit := objstore.CacheLimit(c.Dir, s.cfg.ObjectCacheBytes)
	p, err := c.Prune(limit)
	if err != nil {
		s.log.Warn("object cache not pruned", "dir", c.Dir, "error", err)
		return
	}
	if p.Removed > 0 {
		s.log.Info("object cache pruned", "dir", c.Dir, "limit", limit, "removed", p.Removed, "removed_bytes", p.RemovedBytes, "kept_bytes", p.Kept)
	}
}

// objectCacheDir is the node's cache of objects downloaded from object stores, beside its blob
// cache (and its environments): cache/objects.
func (s *Supervisor) objectCacheDir() string {
	return filepath.Join(filepath.Dir(s.cfg.CacheDir), "objects")
}

// count records what was moved of input or output name; it goes with the next status report.
func (s *Supervisor) count(kind, name string, m api.DataMoved) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timings == nil {
		s.timings = map[string]float64{}
	}
	maps.Copy(s.timings, api.DataTimings(kind, name, m))
}

// isStoreOutput reports whether output name is written to an object store rather than collected
// into the workspace.
func (s *outputCollector) isStoreOutput(name string) bool {
	return s.spec.Spec.Outputs[name].Store != nil
}

// uploadStores uploads each output in an object store from its folder (a uri_file's one file to
// the location's key), once the command completed. An output of a run that did not complete is
// not uploaded (it may be half-written), and the run says so. The first failure is returned; it
// names the output, the datastore and the path.
func (s *outputCollector) uploadStores(ctx context.Context, w *workspace, completed bool) error {
	var firstErr error
	for _, name := range slices.Sorted(maps.Keys(w.outputDirs)) {
		o := s.spec.Spec.Outputs[name]
		if o.Store == nil {
			continue
		}
		loc := o.Store.ForRun(s.spec.RunID)
		if !completed {
			s.warn(fmt.Sprintf("output %s was not written to %s: the command did not complete", name, loc))
			continue
		}
		if err := s.uploadOne(ctx, name, o, loc, w.outputDirs[name]); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("output %s: %w", name, err)
		}
	}
	return firstErr
}

func (s *outputCollector) uploadOne(ctx context.Context, name string, o job.Output, loc datastore.Location, dir string) error {
	cred, err := s.credentials(loc)
	if err != nil {
		return err
	}
	src := dir
	if o.Type == job.URIFile { // the file given to the command as the output (prepare.go)
		src = filepath.Join(dir, path.Base(loc.Path))
		if st, err := os.Stat(src); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("the command wrote no file at %s, which is written to %s", src, loc)
		}
	}
	b, err := objstore.Open(ctx, loc, cred)
	if err != nil {
		return err
	}
	defer b.Close()
	start := time.Now()
	st, err := b.Upload(ctx, src)
	for _, w := range st.Warnings { // what was left out (links, special files)
		s.warn(fmt.Sprintf("output %s: %s (not written to %s)", name, w, loc))
	}
	if err != nil {
		return err
	}
	moved := api.DataMoved{Objects: int64(st.Objects), Bytes: st.Bytes}
	s.log.Info("output uploaded to its store", "output", name, "uri", loc.URI(), "objects", moved.Objects, "bytes", moved.Bytes,
		"seconds", time.Since(start).Seconds())
	s.count("outputs", name, moved)
	return nil
}
