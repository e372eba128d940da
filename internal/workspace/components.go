package workspace

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
)

// Create registers a component version (issue 15): a command component's code
// snapshot must have been uploaded and its environment must resolve as a job's does; a
// pipeline component's steps likewise. Without a version it takes the next integer.
func (cs *Components) Create(ctx context.Context, req api.CreateComponentRequest) (*component.Version, error) {
	sp := req.Spec
	if err := component.Kind.CheckName(sp.Name); err != nil {
		return nil, Invalidf("name: %v", err)
	}
	v := component.Version{Spec: sp, Source: req.Source, CreatedAt: cs.ws.Now()}
	if sp.Version != "" {
		n, err := component.Kind.ParseVersion(sp.Version)
		if err != nil {
			return nil, Invalidf("version: %v", err)
		}
		v.Version = n
	}
	switch sp.Type {
	case component.Command:
		if sp.Job == nil || sp.Job.Command == "" {
			return nil, Invalidf("command: required")
		}
		if err := cs.checkStep(ctx, "", sp.Job.CodeSnapshot, *sp.Job); err != nil {
			return nil, err
		}
	case component.Pipeline:
		if sp.Graph == nil || len(sp.Graph.Steps) == 0 {
			return nil, Invalidf("jobs: a pipeline component needs at least one step")
		}
		for _, name := range slices.Sorted(maps.Keys(sp.Graph.Steps)) {
			st := sp.Graph.Steps[name]
			if err := cs.checkStep(ctx, "jobs."+name+".", st.Spec.CodeSnapshot, st.Spec); err != nil {
				return nil, err
			}
		}
	default:
		return nil, Invalidf("type: %q is not a component type (command or pipeline)", sp.Type)
	}
	created, err := cs.create(ctx, v)
	if err != nil {
		return nil, err
	}
	cs.ws.Log.Info("component created", "component", created.Name, "version", created.Version, "type", created.Type)
	return created, nil
}

// checkStep checks what a component's step needs of the workspace: its uploaded code
// and its registered environment.
func (cs *Components) checkStep(ctx context.Context, field, snapshot string, sp job.Spec) error {
	if snapshot != "" {
		if _, err := cs.ws.readManifest(snapshot); err != nil {
			return Invalidf("%scode: the code snapshot %s was not uploaded: %v", field, snapshot, err)
		}
	}
	if _, err := cs.ws.ResolveEnvironment(ctx, &sp); err != nil {
		var e *Error
		if field != "" && errors.As(err, &e) {
			return &Error{Kind: e.Kind, Msg: field + e.Msg}
		}
		return err
	}
	return nil
}
