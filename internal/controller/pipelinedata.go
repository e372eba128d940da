package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// A step may read a workspaceblobstore path that another step of its pipeline writes (an
// output's `path:`; Azure's 4b_datastore_datapath_uri example): what is there at submit is not
// what the step is to read, or nothing is there yet. Azure resolves a step's data when the step
// starts, and so does Hangar for such a path: it is left unresolved at create (prepareStep) and
// resolved by startStep, which fails the step with the reason when nothing was written there.

// A step's output written to an object store (its path on an object-store datastore, resolved
// at create into Output.Store) never passes through the server: the node uploads it there. A
// step that reads it is given that place (Input.Store, workspace.ResolveJobOutput) and its node
// downloads it from the store directly.

// A pipeline's settings.default_datastore is where its steps' outputs are written, as on Azure:
// an object-store datastore named there takes every data output that says no path of its own at
// Azure's default place, azureml/<step's run>/<output>, and ${{default_datastore}} in a path
// names it. workspaceblobstore (the default) keeps outputs in the workspace, under their job.

// defaultDatastoreOutputs gives the data outputs (uri_folder, uri_file, mltable) of steps that
// have no path Azure's default path on datastore ds, and puts ds in place of
// ${{default_datastore}} in the paths given; models stay in the workspace (registered from the
// job's outputs). It changes the steps' output maps in place of copies.
func defaultDatastoreOutputs(steps map[string]job.PipelineStep, ds string) {
	for name, st := range steps {
		outs := make(map[string]job.Output, len(st.Spec.Outputs))
		for out, o := range st.Spec.Outputs {
			switch {
			case o.Path != "":
				o.Path = strings.NewReplacer("${{default_datastore}}", ds, "${{ default_datastore }}", ds).Replace(o.Path)
			case o.Type == "" || o.Type == job.URIFolder || o.Type == job.MLTable:
				o.Path = "azureml://datastores/" + ds + "/paths/azureml/${{name}}/${{output_name}}/"
			case o.Type == job.URIFile:
				o.Path = "azureml://datastores/" + ds + "/paths/azureml/${{name}}/${{output_name}}"
			}
			outs[out] = o
		}
		st.Spec.Outputs = outs
		steps[name] = st
	}
}

// applyDefaultDatastore applies settings.default_datastore (defaultDatastoreOutputs) when it names
// an object-store datastore; workspaceblobstore and none change nothing, and another kind is
// refused naming the field.
func (c *Controller) applyDefaultDatastore(ctx context.Context, p *job.PipelineRun) error {
	name := p.Settings.DefaultDatastore
	if name == "" || name == datastore.WorkspaceBlobStore {
		return nil
	}
	ds, err := c.Workspace.FindDatastore(ctx, name)
	if err != nil {
		return invalidf("settings.default_datastore: %v", err)
	}
	if !datastore.IsObjectType(ds.Type) {
		return invalidf("settings.default_datastore: datastore %s is a %s datastore; outputs are written to workspaceblobstore or to an object-store datastore (%s)",
			name, ds.Type, strings.Join(datastore.ObjectTypes, ", "))
	}
	defaultDatastoreOutputs(p.Steps, name)
	return nil
}

// writtenLater lists the inputs of step name that read a workspaceblobstore path which an output
// of another step of p writes (the same path, or one inside the other). pipeline is the
// pipeline's run name, which ${{name}} of a step's output path holds (its step's run name).
func writtenLater(p job.PipelineRun, pipeline, name string, inputs map[string]job.Input) []string {
	var out []string
	for _, in := range slices.Sorted(maps.Keys(inputs)) {
		u, ok := blobStoreInput(inputs[in])
		if !ok {
			continue
		}
		if writer := pathWriter(p, pipeline, name, u); writer != "" {
			out = append(out, in)
		}
	}
	return out
}

// blobStoreInput is the workspaceblobstore path a data input reads, if it reads one.
func blobStoreInput(in job.Input) (datastore.URI, bool) {
	if in.IsLiteral() || in.Manifest != "" || !datastore.IsURI(in.Path) {
		return datastore.URI{}, false
	}
	u, err := datastore.ParseURI(in.Path)
	return u, err == nil && u.Datastore == datastore.WorkspaceBlobStore
}

// pathWriter is the step of p, other than name, whose output writes u (or a path inside it, or
// one it is inside), or "".
func pathWriter(p job.PipelineRun, pipeline, name string, u datastore.URI) string {
	for _, other := range slices.Sorted(maps.Keys(p.Steps)) {
		if other == name {
			continue
		}
		st := p.Steps[other]
		for _, out := range slices.Sorted(maps.Keys(st.Spec.Outputs)) {
			w, ok := workspace.OutputDatastorePath(stepRunName(pipeline, other), out, st.Spec.Outputs[out])
			if ok && w.Datastore == u.Datastore && overlaps(w.Path, u.Path) {
				return other
			}
		}
	}
	return ""
}

// overlaps says whether two datastore paths are one, or one is inside the other.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/") || a == "" || b == ""
}

// resolveStartData resolves, when a step starts, its inputs at workspaceblobstore paths that were
// left for then (writtenLater): what is written there now.
func (c *Controller) resolveStartData(ctx context.Context, p *job.Run, name string, sp *job.Spec) error {
	for _, in := range slices.Sorted(maps.Keys(sp.Inputs)) {
		u, ok := blobStoreInput(sp.Inputs[in])
		if !ok {
			continue
		}
		h, err := c.Workspace.BlobStorePath(ctx, u)
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				err = errors.New(ce.Msg)
			}
			if w := pathWriter(*p.Spec.Pipeline, p.ID, name, u); w != "" {
				return fmt.Errorf("input %s: %v (when this step started; step %s of this pipeline writes there)", in, err, w)
			}
			return fmt.Errorf("input %s: %v (when this step started)", in, err)
		}
		v := sp.Inputs[in]
		v.Manifest = h
		sp.Inputs[in] = v
	}
	return nil
}
