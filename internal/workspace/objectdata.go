package workspace

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
)

// A job's data in an object store (docs/data.md, "Use object-store data in a job"): an input or
// output whose path is a path of an object-store datastore (azureml://datastores/<s3, gcs,
// azure_blob or azure_data_lake_gen2 datastore>/paths/...) or a direct URI (s3://, gs://,
// wasb(s)://, abfs(s)://, https://<account>.blob|dfs.core.windows.net/...) gets its Store: the
// Location frozen with the run, which the node reads or writes directly with the datastore's
// credentials (internal/supervisor/objectdata.go). A direct URI takes the credentials and
// endpoint of the workspace's datastore on the same container or bucket, else the node's own
// identity.

// storeInputModes are the input modes whose data the node downloads from the store before the
// command starts: a read-only mount is an eager download here (no FUSE), made read-only.
var storeInputModes = []string{"", "ro_mount", "download", "eval_mount", "eval_download"}

// resolveObjectURI resolves an input given as a direct object-store URI.
func (w *Workspace) resolveObjectURI(ctx context.Context, name string, in job.Input) (job.Input, error) {
	if in.Mode == "direct" {
		return in, nil // the user's code reads the URI itself, with its own credentials
	}
	loc, err := datastore.ParseObjectURI(in.Path)
	if err != nil {
		return in, Invalidf("inputs.%s.path: %v", name, err)
	}
	if loc, err = w.coveringDatastore(ctx, loc); err != nil { // data.go
		return in, Invalidf("inputs.%s.path: %v", name, err)
	}
	return StoreInput(name, in, loc)
}

// StoreInput is input name read from loc in its mode: downloaded before the command (ro_mount,
// the default, and download), or in direct mode the location's URI itself, for the user's code
// to read (with credentials of its own: the datastore's are not handed to the command).
func StoreInput(name string, in job.Input, loc datastore.Location) (job.Input, error) {
	switch {
	case in.Mode == "direct":
		in.Path, in.Store = loc.URI(), nil
		return in, nil
	case !slices.Contains(storeInputModes, in.Mode):
		return in, Invalidf("inputs.%s.mode: %s: an input in an object store is downloaded (ro_mount, download) or passed as its URI (direct)", name, in.Mode)
	case in.Type == job.URIFile && loc.Path == "":
		return in, Invalidf("inputs.%s.path: a uri_file input names one object; %s is the whole container", name, loc.URI())
	}
	in.Store = &loc
	return in, nil
}

// resolveOutputs gives each output whose path is in an object store (a path of an object-store
// datastore, or a direct URI) its Store. ${{output_name}} and ${{default_datastore}} are expanded
// now; ${{name}} stays in the location's path until the run is named (Location.ForRun). An
// output path on a datastore the workspace lacks is refused. A Store that came with the spec is
// derived again.
func (w *Workspace) resolveOutputs(ctx context.Context, sp *job.Spec) error {
	for _, name := range slices.Sorted(maps.Keys(sp.Outputs)) {
		o := sp.Outputs[name]
		o.Store = nil // derived again from the path, as an input's (ResolveInputs)
		sp.Outputs[name] = o
		if o.Path == "" {
			continue
		}
		loc, err := w.outputLocation(ctx, name, o)
		if err != nil {
			return err
		}
		if loc == nil {
			continue
		}
		if err := checkStoreOutput(name, o, *loc); err != nil {
			return err
		}
		o.Store = loc
		sp.Outputs[name] = o
	}
	return nil
}

// outputLocation is where output name's path lies in an object store, or nil when it is not in
// one (workspaceblobstore, a local_folder datastore).
func (w *Workspace) outputLocation(ctx context.Context, name string, o job.Output) (*datastore.Location, error) {
	p := expandOutputPath(o.Path, name)
	if datastore.IsObjectURI(p) {
		loc, err := datastore.ParseObjectURI(p)
		if err == nil {
			loc, err = w.coveringDatastore(ctx, loc) // data.go
		}
		if err != nil {
			return nil, Invalidf("outputs.%s.path: %v", name, err)
		}
		return &loc, nil
	}
	if !datastore.IsURI(p) {
		return nil, nil
	}
	u, err := datastore.ParseURI(p)
	if err != nil {
		return nil, Invalidf("outputs.%s.path: %v", name, err)
	}
	ds, err := w.FindDatastore(ctx, u.Datastore)
	if err != nil {
		return nil, Invalidf("outputs.%s.path: %v", name, err)
	}
	if !datastore.IsObjectType(ds.Type) {
		return nil, nil
	}
	loc := ds.Locate(u.Path)
	return &loc, nil
}

// checkStoreOutput refuses what an output in an object store cannot be: it is a local folder
// (or file) uploaded when the command ends, at a path inside the container.
func checkStoreOutput(name string, o job.Output, loc datastore.Location) error {
	switch {
	case o.Mode != "" && o.Mode != "rw_mount" && o.Mode != "upload":
		return Invalidf("outputs.%s.mode: %s: an output in an object store is a local folder uploaded when the command ends (rw_mount, upload)", name, o.Mode)
	case loc.Path == "":
		return Invalidf("outputs.%s.path: %s names no path inside the container; an output is written at a path of its own", name, loc.URI())
	}
	return nil
}

// expandOutputPath expands ${{output_name}} and ${{default_datastore}} in an output's path, and
// writes ${{name}} one way (RunNamePlaceholder).
func expandOutputPath(p, output string) string {
	return strings.NewReplacer("${{output_name}}", output, "${{ output_name }}", output,
		"${{default_datastore}}", datastore.WorkspaceBlobStore, "${{ default_datastore }}", datastore.WorkspaceBlobStore,
		"${{ name }}", datastore.RunNamePlaceholder).Replace(p)
}

// outputPathIgnored reports whether output name's path is one where no output is written: not
// workspaceblobstore (OutputDatastorePath), nor an object store, nor a datastore the workspace
// lacks (refused by resolveOutputs).
func (w *Workspace) outputPathIgnored(name string, o job.Output) bool {
	if o.Path == "" || o.Store != nil {
		return false
	}
	if _, written := OutputDatastorePath("", name, o); written {
		return false
	}
	p := expandOutputPath(o.Path, name)
	if datastore.IsObjectURI(p) {
		return false
	}
	u, err := datastore.ParseURI(p)
	if err != nil {
		return true
	}
	ds, err := w.FindDatastore(context.Background(), u.Datastore)
	return err == nil && !datastore.IsObjectType(ds.Type)
}

// jobStoreOutput is input name, which reads output out of the job src, as the place in an object
// store src wrote it at, when src wrote it to one (ok): src's location for its run (its ${{name}}
// is src's name), read in the input's mode (StoreInput). The input's path stays
// azureml://jobs/<src>/outputs/<out>, which a pipeline's step cache covers: a producer that ran
// again changes the key, though a fixed path is written again in place. Until src completed
// nothing is there for sure, and the input is refused.
func jobStoreOutput(name string, in job.Input, src *job.Run, out string) (job.Input, bool, error) {
	o, ok := src.Spec.Outputs[out]
	if !ok || o.Store == nil {
		return in, false, nil
	}
	at := o.Store.ForRun(src.ID)
	if src.Status != job.Completed {
		return in, true, Invalidf("inputs.%s.path: job %s writes its output %s to %s when it completes (status %s)", name, src.ID, out, at.URI(), src.Status)
	}
	in.Manifest = ""
	bound, err := StoreInput(name, in, at)
	return bound, true, err
}
