package mlflowapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// The mlflow-artifacts proxy: what MLflow's HttpArtifactRepository sends for a run whose
// artifact_uri is mlflow-artifacts:/... (mlflow/server/handlers.py answers the same routes).
// Uploaded files are content-addressed blobs named by the mlflow_artifacts table; a job's own
// artifacts (its registered manifest) show beside them, read-only.
const (
	mlflowArtifactsPrefix = "/api/2.0/mlflow-artifacts/artifacts/"
	// PutArtifactRoute is the upload's pattern, which limitOf streams to disk like a blob.
	PutArtifactRoute = "PUT " + mlflowArtifactsPrefix + "{path...}"

	CodeNotImplemented = "NOT_IMPLEMENTED"
	// mpuUnsupported must be MLflow's _UnsupportedMultipartUploadException.MESSAGE: a client
	// falls back to a single PUT only when the error message starts with it. A server without a
	// workspace folder for parts answers it.
	mpuUnsupported = "Multipart upload is not supported for the current artifact repository"

	// maxListEntries bounds a proxied listing, which has no paging in MLflow's protocol.
	maxListEntries = 10000
)

// mlflowArtifactRoutes registers the proxy and MLflow REST's ListArtifacts.
func (s *API) mlflowArtifactRoutes(mux Mux) {
	mux.Handle(PutArtifactRoute, contributeOrRunAccess, s.putMLflowArtifact)
	mux.Handle("GET "+mlflowArtifactsPrefix+"{path...}", readOrRunAccess, s.getMLflowArtifact)
	mux.Handle("DELETE "+mlflowArtifactsPrefix+"{path...}", contributeOrRunAccess, s.deleteMLflowArtifact)
	mux.Handle("GET /api/2.0/mlflow-artifacts/artifacts", readOrRunAccess, s.listMLflowArtifacts)
	s.mpuRoutes(mux)
	mux.Handle("GET /api/2.0/mlflow/artifacts/list", readOrRunAccess, s.listRunArtifacts)
}

// artifactTarget is a parsed, authorized artifact path with its run and the run's job tree, or
// with its logged model (mlflowloggedmodels_artifacts.go).
type artifactTarget struct {
	artifactPath
	run   *job.Run
	job   jobTree
	model *tracking.LoggedModel
}

// target checks an artifact path, the caller's right to its run (a run token reaches its own
// run only), and that the run exists. A path in the registered-models namespace is refused: its
// reads are answered before (mlflowartifacts_registered.go), so only a write gets here.
func (s *API) target(r *http.Request, p string) (*artifactTarget, error) {
	if isRegisteredPath(p) {
		return nil, registeredReadOnly(p)
	}
	a, err := parseArtifactPath(p)
	if err != nil {
		return nil, err
	}
	if a.model != "" {
		return s.modelTarget(r, a)
	}
	if err := s.allowRun(r, a.run); err != nil {
		return nil, err
	}
	return s.runTarget(r.Context(), a)
}

func (s *API) runTarget(ctx context.Context, a artifactPath) (*artifactTarget, error) {
	run, err := s.cfg.Runs.Run(ctx, a.run)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "run " + a.run + " does not exist"}
	}
	if err != nil {
		return nil, err
	}
	t := &artifactTarget{artifactPath: a, run: run}
	if run.ArtifactsHash != "" {
		m, err := s.jobManifest(run.ArtifactsHash, "hangar job download "+run.ID)
		if err != nil {
			return nil, fmt.Errorf("artifacts of run %s: %w", run.ID, err)
		}
		t.job = jobTree{m: m}
	}
	return t, nil
}

// readOnly refuses a write or delete that would touch the job's own artifacts, or land in a
// folder of the logs Hangar collects (api.CollectedLogDirs): whether or not the job's files are
// registered yet, what those folders hold is Hangar's only.
func (t *artifactTarget) readOnly() error {
	if t.model != nil {
		return nil // a logged model's files are all logged through MLflow
	}
	if dir, ok := api.CollectedLogDir(t.rel); ok {
		return &Error{Status: http.StatusForbidden, Code: CodePermissionDenied,
			Message: fmt.Sprintf("%s: %s/ holds the logs Hangar collects from run %s; files logged through MLflow cannot go there (log them under another path, e.g. logs/)",
				t.rel, dir, t.run.ID)}
	}
	if owned, ok := t.job.owns(t.rel); ok {
		return &Error{Status: http.StatusForbidden, Code: CodePermissionDenied,
			Message: fmt.Sprintf("%s is an artifact of job %s (%s); a job's own artifacts are read-only", t.relOrRoot(), t.run.ID, owned)}
	}
	return nil
}

func (t *artifactTarget) relOrRoot() string {
	if t.rel == "" {
		return "the artifact root"
	}
	return t.rel
}

func (s *API) putMLflowArtifact(w http.ResponseWriter, r *http.Request) {
	t, err := s.target(r, r.PathValue("path"))
	if err == nil && t.rel == "" {
		err = mlflowInvalid("an upload needs a file path below mlflow-artifacts:/" + t.root())
	}
	if err == nil {
		err = t.readOnly()
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	hash, size, err := s.cfg.Blobs.Put(r.Body, "")
	if err != nil {
		s.writeBodyError(w, err)
		return
	}
	err = putArtifact(r.Context(), s, t, hash, size)
	if errors.Is(err, store.ErrPathTaken) {
		err = &Error{Status: http.StatusBadRequest, Code: CodeInvalidParameter, Message: strings.TrimSuffix(err.Error(), ": "+store.ErrPathTaken.Error())}
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// writeBodyError answers a failed upload: a body over its limit, too slow or cut short
// keeps its status; a full disk is 507 (as the blob routes answer it).
func (s *API) writeBodyError(w http.ResponseWriter, err error) {
	if blob.IsNoSpace(err) {
		s.writeError(w, &Error{Status: http.StatusInsufficientStorage, Code: CodeInternal,
			Message: "the workspace's disk is full: " + err.Error()})
		return
	}
	s.writeError(w, err)
}

func (s *API) getMLflowArtifact(w http.ResponseWriter, r *http.Request) {
	if p := r.PathValue("path"); isRegisteredPath(p) {
		s.getRegisteredFile(w, r, p)
		return
	}
	t, err := s.target(r, r.PathValue("path"))
	if err != nil {
		s.writeError(w, err)
		return
	}
	s.serveTarget(w, r, t)
}

// serveTarget answers the file at the target.
func (s *API) serveTarget(w http.ResponseWriter, r *http.Request, t *artifactTarget) {
	hash, err := s.artifactBlob(r.Context(), t)
	if err != nil {
		s.writeError(w, err)
		return
	}
	s.serveArtifact(w, r, hash, t.rel, "of "+t.owner())
}

// serveArtifact answers a GET of one artifact file, the blob hash, named rel (of is what it is
// a file of, for the log).
func (s *API) serveArtifact(w http.ResponseWriter, r *http.Request, hash, rel, of string) {
	f, err := s.cfg.Blobs.Open(hash)
	if err != nil {
		s.writeError(w, fmt.Errorf("artifact %s %s: %w", rel, of, err))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		s.writeError(w, err)
		return
	}
	// Uploaded files are whatever a script wrote: served as data, never as a page of this
	// origin (the studio's), whatever their name says.
	w.Header().Set("Content-Type", artifactContentType(rel))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "sandbox")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(rel)}))
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// artifactBlob returns the blob of the file at the target: the job's, else the uploaded one.
func (s *API) artifactBlob(ctx context.Context, t *artifactTarget) (string, error) {
	notFound := &Error{Status: http.StatusNotFound, Code: CodeNotFound,
		Message: fmt.Sprintf("%s has no artifact file %s", t.owner(), t.relOrRoot())}
	if t.rel == "" {
		return "", notFound
	}
	if e, ok := t.job.entry(t.rel); ok {
		if e.Type != snapshot.TypeFile {
			return "", notFound
		}
		return e.Hash, nil
	}
	if _, ok := api.CollectedLogDir(t.rel); ok && t.model == nil {
		return "", notFound // an upload there (stored before they were refused) is never served
	}
	a, err := uploadedArtifact(ctx, s, t)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound
	}
	if err != nil {
		return "", err
	}
	return a.Hash, nil
}

// artifactContentType names the types a browser shows without running anything; the rest is
// application/octet-stream.
func artifactContentType(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".txt", ".log", ".csv", ".yaml", ".yml", ".md":
		return "text/plain; charset=utf-8"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}

func (s *API) deleteMLflowArtifact(w http.ResponseWriter, r *http.Request) {
	t, err := s.target(r, r.PathValue("path"))
	if err == nil {
		err = t.readOnly()
	}
	if err == nil {
		_, err = deleteArtifacts(r.Context(), s, t)
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	// Deleting what is not there succeeds, as MLflow's local artifact store does.
	writeJSON(w, http.StatusOK, struct{}{})
}

// FileInfo is MLflow's FileInfo: file_size only for files.
type FileInfo struct {
	Path     string `json:"path"`
	IsDir    bool   `json:"is_dir"`
	FileSize *int64 `json:"file_size,omitempty"`
}

func fileInfo(p string, e store.ArtifactEntry) FileInfo {
	fi := FileInfo{Path: p, IsDir: e.IsDir}
	if !e.IsDir {
		fi.FileSize = &e.Size
	}
	return fi
}

// children lists the target directory's children after the key after: the job's and the
// uploaded ones, at most limit.
func (s *API) children(ctx context.Context, t *artifactTarget, after string, limit int) ([]store.ArtifactEntry, bool, error) {
	if e, ok := t.job.entry(t.rel); ok && e.Type != snapshot.TypeDir {
		return nil, false, nil // a file lists as nothing, as in MLflow
	}
	if _, ok := api.CollectedLogDir(t.rel); ok && t.model == nil {
		return t.job.children(t.rel), false, nil // no upload is ever listed there
	}
	// One more than a page, and the collected log folders that may be left out at the root.
	uploaded, err := uploadedChildren(ctx, s, t, after, limit+1+len(api.CollectedLogDirs))
	if err != nil {
		return nil, false, err
	}
	uploaded = slices.DeleteFunc(uploaded, func(e store.ArtifactEntry) bool {
		_, collected := api.CollectedLogDir(path.Join(t.rel, e.Name))
		return collected && t.model == nil
	})
	out, more := mergeChildren(t.job.children(t.rel), uploaded, after, limit)
	return out, more, nil
}

// listMLflowArtifacts answers GET artifacts?path=<exp>/<run>/artifacts[/dir]: the directory's
// children by their names ({} when there are none, as MLflow's JSON omits an empty list).
func (s *API) listMLflowArtifacts(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Query().Get("path"); isRegisteredPath(p) {
		s.listRegistered(w, r, p)
		return
	}
	t, err := s.target(r, r.URL.Query().Get("path"))
	if err != nil {
		s.writeError(w, err)
		return
	}
	es, more, err := s.children(r.Context(), t, "", maxListEntries)
	if err == nil && more {
		err = mlflowInvalid(fmt.Sprintf("%s of %s holds more than %d entries: list its subdirectories, "+
			"or page with GET /api/2.0/mlflow/artifacts/list", t.relOrRoot(), t.owner(), maxListEntries))
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	var out struct {
		Files []FileInfo `json:"files,omitempty"`
	}
	for _, e := range es {
		out.Files = append(out.Files, fileInfo(e.Name, e))
	}
	writeJSON(w, http.StatusOK, out)
}

// maxJobManifest bounds a job manifest read to serve a request (the controller accepts 512
// MiB when it assembles one; a tree that large is listed with `hangar job download`).
const maxJobManifest = 64 << 20

// manifestCache keeps the few job manifests being browsed decoded: a client downloading a
// run's artifacts lists and fetches file after file of the same manifest. Manifests are
// content-addressed, so an entry is never stale.
var manifestCache = struct {
	sync.Mutex
	m map[string]*snapshot.Manifest
}{m: map[string]*snapshot.Manifest{}}

// manifestCacheSize is how many manifests the cache keeps, each of at most
// manifestCacheEntries entries (about 200 bytes each decoded): a few MiB in all.
const (
	manifestCacheSize    = 8
	manifestCacheEntries = 20000
)

// jobManifest reads a manifest of files to serve (a job's artifacts, a model version's files);
// one too large to read here is refused naming the command that downloads its files instead.
func (s *API) jobManifest(hash, download string) (*snapshot.Manifest, error) {
	manifestCache.Lock()
	m, ok := manifestCache.m[hash]
	manifestCache.Unlock()
	if ok {
		return m, nil
	}
	f, err := s.cfg.Blobs.Open(hash)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxJobManifest+1))
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", hash, err)
	}
	if len(b) > maxJobManifest {
		return nil, mlflowInvalid(fmt.Sprintf("the file list is over %d MiB: use `%s`", maxJobManifest>>20, download))
	}
	if m, err = snapshot.Decode(b); err != nil {
		return nil, err
	}
	if len(m.Entries) > manifestCacheEntries {
		return m, nil
	}
	manifestCache.Lock()
	defer manifestCache.Unlock()
	if len(manifestCache.m) >= manifestCacheSize {
		for k := range manifestCache.m { // any one: the cache is for the few being browsed
			delete(manifestCache.m, k)
			break
		}
	}
	manifestCache.m[hash] = m
	return m, nil
}

// Downloadable splits a run's files logged through MLflow into those `job download` brings down
// beside the job's own (and the studio lists apart from them), and the paths it withholds: in a
// folder of the logs Hangar collects, or where the job's own files are (a job's file always
// wins over a file logged through MLflow, as the proxy serves it).
func (s *API) Downloadable(run *job.Run, up []store.MLflowArtifact) (keep []api.UploadedArtifact, withheld []string) {
	var tree jobTree
	if run.ArtifactsHash != "" {
		// A manifest too large to read here is not checked against: the download writes the
		// job's files after these, so that the job's still win.
		if m, err := s.jobManifest(run.ArtifactsHash, "hangar job download "+run.ID); err == nil {
			tree = jobTree{m: m}
		} else {
			s.log.Warn("artifacts: the job's manifest is not checked against its uploaded files", "run", run.ID, "err", err)
		}
	}
	for _, a := range up {
		_, collected := api.CollectedLogDir(a.Path)
		if _, owned := tree.owns(a.Path); collected || owned {
			withheld = append(withheld, a.Path)
			continue
		}
		keep = append(keep, api.UploadedArtifact{Path: a.Path, Hash: a.Hash, Size: a.Size})
	}
	return keep, withheld
}
