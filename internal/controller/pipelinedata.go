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
