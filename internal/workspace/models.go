package workspace

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

// maxModelUploads bounds the MLflow-logged files merged into a job's artifacts for a model.
const maxModelUploads = 100_000

// Create registers a model version (design 0014): from files the client uploaded
// (req.Manifest), or from a job's output, azureml://jobs/<job>/outputs/<output>[/paths/<p>],
// whose manifest is reused (a sub-path gets a manifest of its own over the same blobs: no bytes
// are copied). Without a version it takes the next integer.
func (mv *Models) Create(ctx context.Context, req api.CreateModelRequest) (*model.Version, error) {
	sp := req.Spec
	if err := model.CheckName(sp.Name); err != nil {
		return nil, Invalidf("name: %v", err)
	}
	v := model.Version{Name: sp.Name, Meta: sp.Meta, Stage: sp.Stage, CreatedAt: mv.ws.Now()}
	var err error
	if v.Type, err = model.CheckType(sp.Type); err != nil {
		return nil, Invalidf("%v", err)
	}
	if sp.Version != "" {
		if v.Version, err = model.ParseVersion(sp.Version); err != nil {
			return nil, Invalidf("%v", err)
		}
	}
	folder := ""
	switch p := strings.TrimSpace(sp.Path); {
	case req.Manifest != "":
		v.Manifest, v.Source = req.Manifest, model.SourceLocal
	case strings.HasPrefix(strings.ToLower(p), "azureml://jobs/"):
		if v.Manifest, err = mv.ws.jobOutputManifest(ctx, p); err != nil {
			return nil, err
		}
		v.Source = p
	case strings.HasPrefix(p, LoggedModelSource):
		id, ok := loggedModelID(p)
		if !ok {
			return nil, Invalidf("path: %s: a logged model is models:/m-<id>", p)
		}
		if v.Manifest, folder, err = mv.ws.loggedModelManifest(ctx, id); err != nil {
			return nil, err
		}
		v.Source = p
	case p == "":
		return nil, Invalidf("path: required (a local file or folder, or azureml://jobs/<job>/outputs/<output>)")
	default:
		return nil, Invalidf("path: %s is not supported by this workspace: give a local file or folder, or a job output (azureml://jobs/<job>/outputs/<output>[/paths/<path>])", p)
	}
	m, err := mv.ws.readManifest(v.Manifest)
	if err != nil {
		return nil, Invalidf("path: the model's files (%s) were not uploaded: %v", v.Manifest, err)
	}
	v.Files, v.Size = len(m.Files()), m.TotalSize()
	v.Folder = modelFolder(sp.Path, m.Files())
	if folder != "" {
		v.Folder = folder
	}
	created, err := mv.create(ctx, v)
	if err != nil {
		return nil, err
	}
	mv.ws.Log.Info("model created", "model", created.Name, "version", created.Version, "source", created.Source)
	return created, nil
}

// ModelInput is a run's input holding a model's files, fetched and cached on the node like any
// uploaded input, read-only.
func ModelInput(v *model.Version) job.Input {
	return job.Input{Type: job.URIFolder, Mode: "ro_mount", Manifest: v.Manifest, Path: v.ID()}
}

// modelInputTypes are the input types whose azureml:<name>:<version> path may name a model.
var modelInputTypes = map[string]bool{
	job.CustomModel: true, job.MLflowModel: true, job.TritonModel: true, job.URIFolder: true, job.URIFile: true,
}

// resolveAssetInput resolves an input given as azureml:<name>:<version> or azureml:<name>@latest:
// a registered model's files. Data asset references are resolved first (resolveAssetRef).
func (w *Workspace) resolveAssetInput(ctx context.Context, name string, in job.Input) (job.Input, error) {
	if !modelInputTypes[in.Type] {
		return in, Invalidf("inputs.%s.path: a %s input cannot name a model (%s)", name, in.Type, in.Path)
	}
	v, err := w.Models.Resolve(ctx, in.Path)
	var ce *Error
	if errors.As(err, &ce) {
		return in, Invalidf("inputs.%s.path: %s", name, ce.Msg)
	}
	if err != nil {
		return in, err
	}
	in.Manifest = v.Manifest
	return in, nil
}

// jobOutputManifest returns the manifest of azureml://jobs/<job>/outputs/<output>[/paths/<p>].
// The output "artifacts" (or "default") is what the job wrote to ./outputs, ./logs and its logs,
// with the files it logged through MLflow beside them, as job download lays them out.
func (w *Workspace) jobOutputManifest(ctx context.Context, uri string) (string, error) {
	rest := uri[len("azureml://jobs/"):]
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 3 || parts[0] == "" || parts[1] != "outputs" || parts[2] == "" {
		return "", Invalidf("path: expected azureml://jobs/<job>/outputs/<output>[/paths/<path>], got %s", uri)
	}
	sub := ""
	if len(parts) == 4 {
		p, ok := strings.CutPrefix(parts[3], "paths/")
		if !ok {
			return "", Invalidf("path: expected .../outputs/<output>/paths/<path>, got %s", uri)
		}
		sub = strings.Trim(p, "/")
		if sub != "" && (path.Clean(sub) != sub || sub == ".." || strings.HasPrefix(sub, "../")) {
			return "", Invalidf("path: %q is not a clean path inside the output", p)
		}
	}
	run, err := w.Store.Runs.Run(ctx, parts[0])
	if errors.Is(err, store.ErrNotFound) {
		return "", Invalidf("path: no job named %s", parts[0])
	} else if err != nil {
		return "", err
	}
	out := parts[2]
	artifacts := out == "artifacts" || out == "default"
	h := run.NamedOutputs[out]
	if artifacts {
		h = run.ArtifactsHash
	}
	noOutput := Invalidf("path: job %s has no output %q (status %s)", run.ID, out, run.Status)
	if h == "" && !artifacts {
		return "", noOutput
	}
	if sub == "" && !artifacts {
		return h, nil
	}
	// A job still running has no artifacts manifest yet, but what it logged through MLflow is
	// stored as it is uploaded: a model it registers from inside (mlflow.register_model) is those
	// files.
	m := &snapshot.Manifest{}
	if h != "" {
		var err error
		if m, err = w.readManifest(h); err != nil {
			return "", fmt.Errorf("read output %s of job %s: %w", out, run.ID, err)
		}
	}
	if artifacts {
		up, err := w.Store.Tracking.MLflowArtifactFiles(ctx, run.ID, maxModelUploads)
		if err != nil {
			return "", err
		}
		m = withUploads(m, up)
	}
	if len(m.Entries) == 0 {
		return "", noOutput
	}
	if sub != "" {
		if m, err = subtree(m, sub); err != nil {
			return "", Invalidf("path: job %s output %s: %v", run.ID, out, err)
		}
	}
	return w.putManifest(m)
}

func (w *Workspace) putManifest(m *snapshot.Manifest) (string, error) {
	data, hash, err := m.Encode()
	if err != nil {
		return "", err
	}
	if w.Blobs.Has(hash) {
		return hash, nil
	}
	if _, err := w.Blobs.PutBytes(data); err != nil {
		return "", fmt.Errorf("store manifest: %w", err)
	}
	return hash, nil
}

// withUploads adds files logged through MLflow to a job's artifacts manifest, with their parent
// folders. A path the job's own files already hold keeps the job's file, as job download does for
// the folders it writes first; an upload that would sit below a file is left out.
func withUploads(m *snapshot.Manifest, up []store.MLflowArtifact) *snapshot.Manifest {
	if len(up) == 0 {
		return m
	}
	out := &snapshot.Manifest{Entries: append([]snapshot.Entry(nil), m.Entries...)}
	kinds := make(map[string]snapshot.EntryType, len(m.Entries))
	for _, e := range m.Entries {
		kinds[e.Path] = e.Type
	}
	for _, a := range up {
		if _, taken := kinds[a.Path]; taken || !underDirs(kinds, a.Path) {
			continue
		}
		for d := path.Dir(a.Path); d != "."; d = path.Dir(d) {
			if _, ok := kinds[d]; !ok {
				kinds[d] = snapshot.TypeDir
				out.Entries = append(out.Entries, snapshot.Entry{Path: d, Type: snapshot.TypeDir, Mode: 0o755})
			}
		}
		kinds[a.Path] = snapshot.TypeFile
		out.Entries = append(out.Entries, snapshot.Entry{Path: a.Path, Type: snapshot.TypeFile, Hash: a.Hash, Size: a.Size, Mode: 0o644})
	}
	return out
}

// underDirs reports whether every existing parent of p is a folder.
func underDirs(kinds map[string]snapshot.EntryType, p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if t, ok := kinds[d]; ok && t != snapshot.TypeDir {
			return false
		}
	}
	return true
}

// subtree is the part of a manifest at sub: a folder's entries with the folder's path taken off,
// or a single file under its own name.
func subtree(m *snapshot.Manifest, sub string) (*snapshot.Manifest, error) {
	out := &snapshot.Manifest{}
	prefix := sub + "/"
	for _, e := range m.Entries {
		switch {
		case e.Path == sub && e.Type == snapshot.TypeDir:
		case e.Path == sub:
			e.Path = path.Base(e.Path)
			return &snapshot.Manifest{Entries: []snapshot.Entry{e}}, nil
		case strings.HasPrefix(e.Path, prefix):
			e.Path = e.Path[len(prefix):]
			out.Entries = append(out.Entries, e)
		}
	}
	if len(out.Entries) == 0 {
		return nil, fmt.Errorf("nothing at %s", sub)
	}
	return out, nil
}

// modelFolder is the name a registered model's files sit under in a deployment (Azure keeps the
// registered folder's name below AZUREML_MODEL_DIR; a one-file model sits there directly): the
// last segment of its path, unless the model is that one file.
func modelFolder(p string, files []snapshot.Entry) string {
	p = strings.TrimRight(strings.ReplaceAll(strings.TrimSpace(p), "\\", "/"), "/")
	base := path.Base(p)
	if base == "." || base == "/" || base == "" || (len(files) == 1 && files[0].Path == base) {
		return ""
	}
	return base
}
