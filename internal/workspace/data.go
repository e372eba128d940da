package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
)

// Create registers a data asset version (issue 15): from files the client uploaded
// (req.Manifest, also written at LocalUpload/<id>/<name> in workspaceblobstore), a job's output
// (its manifest reused), a workspaceblobstore path (what is there now, content-addressed), or
// data read where it is (a local_folder datastore path, an http(s) URL). Without a version it
// takes the next integer.
func (da *Data) Create(ctx context.Context, req api.CreateDataRequest) (*dataset.Version, error) {
	sp := req.Spec
	if err := dataset.Kind.CheckName(sp.Name); err != nil {
		return nil, Invalidf("name: %v", err)
	}
	v := dataset.Version{Name: sp.Name, Meta: sp.Meta, CreatedAt: da.ws.Now()}
	var err error
	if v.Type, err = dataset.CheckType(sp.Type); err != nil {
		return nil, Invalidf("%v", err)
	}
	if sp.Version != "" {
		if v.Version, err = dataset.Kind.ParseVersion(sp.Version); err != nil {
			return nil, Invalidf("%v", err)
		}
	}
	if sp.Datastore != "" && sp.Datastore != datastore.WorkspaceBlobStore {
		return nil, Invalidf("datastore: uploads go to %s, the workspace's own datastore", datastore.WorkspaceBlobStore)
	}
	if err := da.source(ctx, &v, sp.Path, req.Manifest); err != nil {
		return nil, err
	}
	if v.Manifest != "" {
		m, err := da.ws.readManifest(v.Manifest)
		if err != nil {
			return nil, Invalidf("path: the data's files (%s) were not uploaded: %v", v.Manifest, err)
		}
		var files []string
		for _, f := range m.Files() {
			files = append(files, f.Path)
		}
		if err := dataset.CheckFiles(v.Type, sp.Path, files); err != nil {
			return nil, Invalidf("path: %v", err)
		}
		v.Files, v.Size = len(files), m.TotalSize()
	}
	created, err := da.create(ctx, v)
	if err != nil {
		return nil, err
	}
	if req.Manifest != "" {
		if err := da.ws.Store.Assets.PutDatastorePath(ctx, datastore.Entry{Datastore: datastore.WorkspaceBlobStore,
			Path: datastore.UploadPath(req.Manifest, sp.Path), Manifest: req.Manifest, CreatedAt: v.CreatedAt}); err != nil {
			return nil, err
		}
	}
	da.ws.Log.Info("data asset created", "data", created.Name, "version", created.Version, "source", created.Source)
	return created, nil
}

// source sets where a new data version's files are: Manifest (kept in the workspace) or Path
// (read where they are), and Source.
func (da *Data) source(ctx context.Context, v *dataset.Version, p, uploaded string) error {
	p = strings.TrimSpace(p)
	lower := strings.ToLower(p)
	var err error
	switch {
	case uploaded != "":
		v.Manifest, v.Source = uploaded, dataset.SourceLocal
		v.Path = datastore.URI{Datastore: datastore.WorkspaceBlobStore, Path: datastore.UploadPath(uploaded, p)}.String()
	case strings.HasPrefix(lower, "azureml://jobs/"):
		v.Manifest, err = da.ws.jobOutputManifest(ctx, p)
		v.Source = p
	case datastore.IsURI(p):
		v.Source = p
		return da.datastoreSource(ctx, v, p)
	case datastore.IsObjectURI(p):
		v.Path, v.Source = p, p
		return da.objectSource(ctx, v, p)
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		if v.Type != dataset.URIFile {
			return Invalidf("path: %s is read as one file over http(s): use type uri_file, or upload a folder", p)
		}
		v.Path, v.Source = p, p
	case p == "":
		return Invalidf("path: required (a local file or folder, a job output, an azureml://datastores/<datastore>/paths/<path> URI or an http(s) URL)")
	default:
		return Invalidf("path: %s is not supported by this workspace: give a local file or folder, a job output, an azureml://datastores/<datastore>/paths/<path> URI or an http(s) URL", p)
	}
	return err
}

// datastoreSource registers a datastore path: what workspaceblobstore holds there now (its
// manifest), or a local_folder path read in place by jobs.
func (da *Data) datastoreSource(ctx context.Context, v *dataset.Version, p string) error {
	u, err := datastore.ParseURI(p)
	if err != nil {
		return Invalidf("path: %v", err)
	}
	ds, err := da.ws.FindDatastore(ctx, u.Datastore)
	if err != nil {
		return Invalidf("path: %v", err)
	}
	if ds.Type == datastore.TypeLocalFolder {
		v.Path = u.String()
		return nil
	}
	if datastore.IsObjectType(ds.Type) {
		v.Path = u.String()
		return setLocation(v, ds.Locate(u.Path))
	}
	if v.Manifest, err = da.ws.BlobStorePath(ctx, u); err != nil {
		return Invalidf("path: %v", err)
	}
	return nil
}

// objectSource registers a direct object-store URI where it is, with the datastore of the
// workspace on its container or bucket (whose credentials read it) if there is one.
func (da *Data) objectSource(ctx context.Context, v *dataset.Version, p string) error {
	loc, err := datastore.ParseObjectURI(p)
	if err != nil {
		return Invalidf("path: %v", err)
	}
	if loc, err = da.ws.coveringDatastore(ctx, loc); err != nil {
		return Invalidf("path: %v", err)
	}
	return setLocation(v, loc)
}

// setLocation records where a version's bytes lie in an object store; a uri_file names one
// object, never a whole container.
func setLocation(v *dataset.Version, loc datastore.Location) error {
	if v.Type == dataset.URIFile && loc.Path == "" {
		return Invalidf("path: type uri_file names one object; %s is the whole container", loc.URI())
	}
	v.Location = &loc
	return nil
}

// coveringDatastore gives loc, a direct URI's location, the workspace's datastore on its
// container or bucket (its name, endpoint and region), if one holds it; two are ambiguous.
func (w *Workspace) coveringDatastore(ctx context.Context, loc datastore.Location) (datastore.Location, error) {
	all, err := w.Datastores.List(ctx)
	if err != nil {
		return loc, err
	}
	var found []datastore.Datastore
	for _, d := range all {
		if datastore.IsObjectType(d.Type) && loc.Covers(d) {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 0:
		return loc, nil
	case 1:
		at := found[0].Locate(loc.Path)
		loc.Datastore, loc.Endpoint, loc.Region = at.Datastore, at.Endpoint, at.Region
		return loc, nil
	}
	return loc, fmt.Errorf("%s is in datastores %s and %s, each with its own credentials: name one as azureml://datastores/<datastore>/paths/%s",
		loc.URI(), found[0].Name, found[1].Name, loc.Path)
}

// dataInputTypes are the input types whose azureml:<name>:<version> path names a data asset
// first; uri_folder and uri_file fall back to a registered model of that name.
var dataInputTypes = map[string]bool{job.URIFolder: true, job.URIFile: true, job.MLTable: true}

// resolveAssetRef resolves an input given as azureml:<name>:<version> or azureml:<name>@latest:
// a data asset, or a registered model (resolveAssetInput).
func (w *Workspace) resolveAssetRef(ctx context.Context, name string, in job.Input, compute string) (job.Input, error) {
	if r, err := model.ParseRef(in.Path, false); !dataInputTypes[in.Type] || (err == nil && r.Alias != "") {
		return w.resolveAssetInput(ctx, name, in) // data has no aliases: name@<alias> is a model
	}
	v, err := w.Data.Resolve(ctx, in.Path)
	var ce *Error
	if errors.As(err, &ce) && ce.Kind == NotFound && in.Type != job.MLTable {
		if _, merr := w.Models.Resolve(ctx, in.Path); merr == nil {
			return w.resolveAssetInput(ctx, name, in)
		}
	}
	if errors.As(err, &ce) {
		return in, Invalidf("inputs.%s.path: %s", name, ce.Msg)
	}
	if err != nil {
		return in, err
	}
	if v.Manifest == "" {
		// Data read where it is: resolved as if the job named its path (an object store's, a
		// local_folder's), so that the run gets the datastore's location as it is now.
		ref := in.Path
		in.Path = v.Path
		if v.Location != nil && !datastore.IsURI(v.Path) {
			out, err := w.resolveURI(ctx, name, in, compute)
			if errors.As(err, &ce) {
				return in, Invalidf("%s (data asset %s)", ce.Msg, ref)
			}
			return out, err
		}
		if datastore.IsURI(v.Path) {
			out, err := w.resolveDatastoreInput(ctx, name, in, compute)
			if errors.As(err, &ce) {
				return in, Invalidf("%s (data asset %s)", ce.Msg, ref)
			}
			return out, err
		}
		if in.Type != job.URIFile {
			return in, Invalidf("inputs.%s.path: data asset %s is the file %s, read over http(s): use type uri_file", name, ref, v.Path)
		}
		return in, nil
	}
	if in.Type == job.URIFile && v.Files != 1 {
		return in, Invalidf("inputs.%s.path: data asset %s holds %d files; a uri_file input needs one (use uri_folder)", name, in.Path, v.Files)
	}
	in.Manifest = v.Manifest
	return in, nil
}
