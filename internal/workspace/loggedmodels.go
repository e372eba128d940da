package workspace

import (
	"context"
	"errors"
	"strings"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

// A model version registered from an MLflow 3 logged model (models:/m-<id>, what
// mlflow.register_model sends after log_model): the files logged under the model's
// artifact_uri, in a manifest over the same blobs (no bytes copied), in a folder named as the
// logged model is.

// LoggedModelSource is the prefix of a logged model's URI.
const LoggedModelSource = "models:/"

// loggedModelID reads models:/m-<id> (one segment, no alias); ok is false for anything else.
func loggedModelID(p string) (string, bool) {
	id, ok := strings.CutPrefix(p, LoggedModelSource)
	if !ok || !strings.HasPrefix(id, "m-") || strings.ContainsAny(id, "/@\\") {
		return "", false
	}
	return id, true
}

// loggedModelManifest returns the manifest of a live logged model's files and its name.
func (w *Workspace) loggedModelManifest(ctx context.Context, id string) (hash, name string, err error) {
	m, err := w.Store.Tracking.LoggedModel(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", "", Invalidf("path: no logged model %s", id)
	}
	if err != nil {
		return "", "", err
	}
	files, err := w.Store.Tracking.LoggedModelArtifactFiles(ctx, id, maxModelUploads)
	if err != nil {
		return "", "", err
	}
	if len(files) == 0 {
		return "", "", Invalidf("path: logged model %s has no files yet (status %s)", id, m.Info.Status)
	}
	hash, err = w.putManifest(withUploads(&snapshot.Manifest{}, files))
	// The name is the client's text: it names a folder only when it is a model name's shape.
	name = m.Info.Name
	if model.CheckName(name) != nil {
		name = id
	}
	return hash, name, err
}
