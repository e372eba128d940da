package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// List lists the workspace's datastores: workspaceblobstore first, then those created.
func (dss *Datastores) List(ctx context.Context) ([]datastore.Datastore, error) {
	made, err := dss.ws.Store.Assets.Datastores(ctx)
	if err != nil {
		return nil, err
	}
	return append([]datastore.Datastore{datastore.Workspace()}, made...), nil
}

// Get returns one datastore, as a NotFound error naming what exists when there is none.
func (dss *Datastores) Get(ctx context.Context, name string) (*datastore.Datastore, error) {
	ds, err := dss.ws.FindDatastore(ctx, name)
	if err != nil {
		return nil, NotFoundf("%v", err)
	}
	return ds, nil
}

// datastore finds a datastore; a missing one is a plain error naming those that exist.
func (w *Workspace) FindDatastore(ctx context.Context, name string) (*datastore.Datastore, error) {
	if name == datastore.WorkspaceBlobStore {
		ws := datastore.Workspace()
		return &ws, nil
	}
	ds, err := w.Store.Assets.Datastore(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		all, _ := w.Datastores.List(ctx)
		var names []string
		for _, d := range all {
			names = append(names, d.Name)
		}
		return nil, fmt.Errorf("no datastore named %s in this workspace (known: %s)", name, strings.Join(names, ", "))
	}
	return ds, err
}

// Create creates or replaces a datastore: a local_folder, or an object store with its credentials
// sealed with the workspace key (nil or empty: the node's ambient identity). A replace is the
// whole datastore, as Azure's update is: credentials the new file leaves out are dropped, and
// the datastore then uses the node's identity.
func (dss *Datastores) Create(ctx context.Context, d datastore.Datastore, creds *datastore.Credentials) (*datastore.Datastore, error) {
	if err := datastore.Check(d); err != nil {
		return nil, Invalidf("%v", err)
	}
	var c datastore.Credentials
	if creds != nil {
		c = creds.Normalized()
	}
	if err := datastore.CheckCredentials(d.Type, c); err != nil {
		return nil, Invalidf("%v", err)
	}
	sealed, err := dss.seal(d.Name, c)
	if err != nil {
		return nil, err
	}
	if old, err := dss.ws.Store.Assets.Datastore(ctx, d.Name); err == nil {
		d.CreatedAt = old.CreatedAt
	} else {
		d.CreatedAt = dss.ws.Now()
	}
	d.Builtin, d.CredentialKind, d.LastUsedBy, d.LastUsedAt = false, c.Kind(), "", time.Time{}
	if err := dss.ws.Store.Assets.PutDatastore(ctx, d, sealed); err != nil {
		return nil, err
	}
	dss.ws.Log.Info("datastore created", "datastore", d.Name, "type", d.Type, "location", where(d), "credentials", or(d.CredentialKind, "ambient"))
	return dss.Get(ctx, d.Name)
}

// seal seals credentials as JSON; none is "" (the node's identity).
func (dss *Datastores) seal(name string, c datastore.Credentials) (string, error) {
	if c == (datastore.Credentials{}) {
		return "", nil
	}
	if dss.ws.Sealer == nil {
		return "", errors.New("no workspace key to seal a datastore's credentials")
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	sealed, err := dss.ws.Sealer.Encrypt(b)
	if err != nil {
		return "", fmt.Errorf("seal datastore %s's credentials: %w", name, err)
	}
	return sealed, nil
}

// Delete removes a datastore and its credentials. Runs that name it and have not fetched its
// credentials yet fail, saying it is gone; workspaceblobstore cannot be deleted.
func (dss *Datastores) Delete(ctx context.Context, name string) (*datastore.Datastore, error) {
	if name == datastore.WorkspaceBlobStore {
		return nil, Invalidf("name: %s is the workspace's own datastore and cannot be deleted", name)
	}
	d, err := dss.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := dss.ws.Store.Assets.DeleteDatastore(ctx, name); err != nil {
		return nil, mapStoreErr(err)
	}
	dss.ws.Log.Info("datastore deleted", "datastore", name)
	return d, nil
}

// where is a datastore's place, for logs and messages: a local_folder's path, an object store's URI.
func where(d datastore.Datastore) string {
	if datastore.IsObjectType(d.Type) {
		return d.Locate("").URI()
	}
	return d.Path
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// resolveDatastoreInput resolves an input at azureml://datastores/<datastore>/paths/<path>: in
// workspaceblobstore, the manifest written there (fetched and cached on the node like any
// input); in a local_folder datastore, the folder on the node's shared filesystem, read in
// place, when the job's compute target is one whose nodes mount it; in an object store, its
// location (objectdata.go), which the node reads directly.
func (w *Workspace) resolveDatastoreInput(ctx context.Context, name string, in job.Input, target string) (job.Input, error) {
	u, err := datastore.ParseURI(in.Path)
	if err != nil {
		return in, Invalidf("inputs.%s.path: %v", name, err)
	}
	ds, err := w.FindDatastore(ctx, u.Datastore)
	if err != nil {
		return in, Invalidf("inputs.%s.path: %v", name, err)
	}
	if datastore.IsObjectType(ds.Type) {
		return StoreInput(name, in, ds.Locate(u.Path)) // objectdata.go
	}
	if ds.Type != datastore.TypeLocalFolder {
		if in.Manifest, err = w.BlobStorePath(ctx, u); err != nil {
			return in, Invalidf("inputs.%s.path: %v", name, err)
		}
		return in, nil
	}
	if !ds.Mounts(target) {
		return in, Invalidf("inputs.%s.path: datastore %s (%s) is not mounted on the nodes of compute %s (its computes: %s); run the job there or add %s to the datastore's computes",
			name, ds.Name, ds.Path, target, strings.Join(mountedOn(*ds), ", "), target)
	}
	local := ds.LocalPath(u.Path)
	if target == compute.LocalName {
		if _, err := os.Stat(local); err != nil {
			return in, Invalidf("inputs.%s.path: %s is %s on datastore %s, which does not exist here", name, in.Path, local, ds.Name)
		}
	}
	in.Path, in.Mode = local, "direct"
	return in, nil
}

func mountedOn(d datastore.Datastore) []string {
	if len(d.Computes) == 0 {
		return datastore.DefaultComputes
	}
	return d.Computes
}

// blobStorePath returns the manifest of what workspaceblobstore holds at u.Path: what an upload or
// a job output with that path wrote there, or else a job's output at Azure's default place
// (azureml/<job>/<output>/...). A path inside what was written gets a manifest of its own over
// the same blobs.
func (w *Workspace) BlobStorePath(ctx context.Context, u datastore.URI) (string, error) {
	entries, err := w.Store.Assets.DatastorePaths(ctx, u.Datastore, datastore.Prefixes(u.Path))
	if err != nil {
		return "", err
	}
	e, sub, ok := datastore.Find(entries, u.Path)
	if !ok {
		if h, found, err := w.defaultOutputPath(ctx, u); found || err != nil {
			return h, err
		}
		return "", fmt.Errorf("nothing was written at %s (uploads with hangar data create --path, and job outputs with that path, write there)", u)
	}
	h := e.Manifest
	if e.Run != "" {
		at := datastore.URI{Datastore: e.Datastore, Path: e.Path}
		r, err := w.Store.Runs.Run(ctx, e.Run)
		if err != nil {
			return "", fmt.Errorf("%s is written by job %s: %w", at, e.Run, err)
		}
		if h = r.NamedOutputs[e.Output]; h == "" {
			return "", fmt.Errorf("%s is written by job %s (output %s), which has not written it (status %s)", at, e.Run, e.Output, r.Status)
		}
	}
	if sub == "" {
		return h, nil
	}
	m, err := w.readManifest(h)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", u, err)
	}
	if m, err = subtree(m, sub); err != nil {
		return "", fmt.Errorf("%s: %v", u, err)
	}
	return w.putManifest(m)
}

// defaultOutputPath reads u as Azure's default place of a job's output, azureml/<job>/<output>
// [/<path>], when a job of that name exists; found is false otherwise (a folder named azureml is
// not a job's output unless the job is there).
func (w *Workspace) defaultOutputPath(ctx context.Context, u datastore.URI) (h string, found bool, err error) {
	run, out, sub, ok := datastore.JobOutputPath(u.Path)
	if !ok {
		return "", false, nil
	}
	if _, err := w.Store.Runs.Run(ctx, run); errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	uri := "azureml://jobs/" + run + "/outputs/" + out
	if sub != "" {
		uri += "/paths/" + sub
	}
	h, err = w.jobOutputManifest(ctx, uri)
	var ce *Error
	if errors.As(err, &ce) {
		return "", true, errors.New(strings.TrimPrefix(ce.Msg, "path: "))
	}
	return h, true, err
}

// recordOutputPaths notes, for each output whose path is in workspaceblobstore, that the run
// writes it there: inputs naming that path read the output once the run has finished.
func (w *Workspace) RecordOutputPaths(ctx context.Context, r *job.Run) error {
	for name, o := range r.Spec.Outputs {
		u, ok := OutputDatastorePath(r.ID, name, o)
		if !ok {
			continue
		}
		if err := w.Store.Assets.PutDatastorePath(ctx, datastore.Entry{Datastore: u.Datastore, Path: u.Path,
			Run: r.ID, Output: name, CreatedAt: r.CreatedAt}); err != nil {
			return err
		}
	}
	return nil
}

// OutputDatastorePath is the workspaceblobstore path an output writes, with its expressions
// expanded, if it names one.
func OutputDatastorePath(run, name string, o job.Output) (datastore.URI, bool) {
	if o.Path == "" {
		return datastore.URI{}, false
	}
	p := strings.NewReplacer("${{name}}", run, "${{ name }}", run, "${{output_name}}", name, "${{ output_name }}", name,
		"${{default_datastore}}", datastore.WorkspaceBlobStore, "${{ default_datastore }}", datastore.WorkspaceBlobStore).Replace(o.Path)
	u, err := datastore.ParseURI(p)
	if err != nil || u.Datastore != datastore.WorkspaceBlobStore || u.Path == "" {
		return datastore.URI{}, false
	}
	return u, true
}
