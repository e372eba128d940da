package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
)

// modelLineage answers GET /api/models/{name}/versions/{version}/lineage: the run a version was
// registered from (its code snapshot, environment and data inputs), the MLflow aliases naming it
// and the online and batch deployments serving it. Readers may read it, as they read runs and
// deployments.
func (s *assetRoutes) modelLineage(r *http.Request) (*api.ModelLineage, error) {
	ref := r.PathValue("name") + ":" + r.PathValue("version")
	if r.PathValue("version") == "latest" {
		ref = r.PathValue("name") + "@latest"
	}
	v, err := s.cfg.Controller.Workspace.Models.Resolve(r.Context(), ref)
	if err != nil {
		return nil, err
	}
	out, err := s.lineages(r.Context(), v.Name, []model.Version{*v})
	if err != nil {
		return nil, err
	}
	return &out[0], nil
}

// modelLineages answers GET /api/models/{name}/lineage: the registered model's description and
// tags, and every version's lineage, archived ones too, newest first (the studio's model page,
// in one request).
func (s *assetRoutes) modelLineages(r *http.Request) (*api.ModelLineages, error) {
	name := r.PathValue("name")
	if err := model.CheckName(name); err != nil {
		return nil, badRequest(err.Error())
	}
	versions, err := s.cfg.Store.Assets.Models(r.Context(), name)
	if err != nil {
		return nil, err
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("model %s: %w", name, store.ErrNotFound)
	}
	versions = slices.Clone(versions)
	slices.SortStableFunc(versions, func(a, b model.Version) int { return b.CreatedAt.Compare(a.CreatedAt) })
	out := &api.ModelLineages{Name: name, Tags: map[string]string{}}
	if out.Versions, err = s.lineages(r.Context(), name, versions); err != nil {
		return nil, err
	}
	registered, err := s.cfg.Store.Assets.RegisteredModels(r.Context(), name)
	if err != nil {
		return nil, err
	}
	if len(registered) == 1 {
		out.Description = registered[0].Description
	}
	tags, err := s.cfg.Store.Assets.RegisteredModelTags(r.Context(), name)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		out.Tags[t.Key] = t.Value
	}
	return out, nil
}

// lineages are the lineages of some versions of model name: the model's aliases and the
// deployments of its versions are read once.
func (s *assetRoutes) lineages(ctx context.Context, name string, of []model.Version) ([]api.ModelLineage, error) {
	versions, err := s.cfg.Store.Assets.Models(ctx, name)
	if err != nil {
		return nil, err
	}
	aliases, err := s.cfg.Store.Assets.ModelAliases(ctx, name)
	if err != nil {
		return nil, err
	}
	byAlias := map[string]string{}
	for _, a := range aliases {
		byAlias[a.Alias] = a.Version
	}
	deps, err := s.modelDeployments(ctx, name, versions, byAlias)
	if err != nil {
		return nil, err
	}
	runs := map[string]*api.LineageRun{} // by source: versions from one run share it
	out := make([]api.ModelLineage, 0, len(of))
	for _, v := range of {
		l := api.ModelLineage{Name: v.Name, Version: v.Version, Source: v.Source, Aliases: []string{}, Deployments: []api.ModelDeployment{}}
		for _, a := range aliases {
			if a.Version == v.Version {
				l.Aliases = append(l.Aliases, a.Alias)
			}
		}
		for _, d := range deps {
			if d.Version == v.Version {
				l.Deployments = append(l.Deployments, d)
			}
		}
		run, seen := runs[v.Source]
		if !seen {
			if run, err = s.lineageRun(ctx, v.Source); err != nil {
				return nil, err
			}
			runs[v.Source] = run
		}
		l.Run = run
		out = append(out, l)
	}
	return out, nil
}

// lineageRun is the run behind a version's source azureml://jobs/<run>/outputs/<output>[...],
// nil for any other source (uploaded files).
func (s *assetRoutes) lineageRun(ctx context.Context, source string) (*api.LineageRun, error) {
	rest, ok := strings.CutPrefix(source, "azureml://jobs/")
	if !ok {
		return nil, nil
	}
	id, output, _ := strings.Cut(rest, "/")
	out := &api.LineageRun{Name: id, Output: strings.TrimPrefix(output, "outputs/"), Inputs: []api.LineageInput{}}
	run, err := s.cfg.Store.Runs.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		out.Deleted = true
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	sp := run.Spec
	out.DisplayName, out.ExperimentName, out.Status = run.DisplayName, run.ExperimentName, run.Status
	out.CodeSnapshot = sp.CodeSnapshot
	out.Environment = lineageEnvironment(sp.Environment)
	for _, name := range slices.Sorted(maps.Keys(sp.Inputs)) {
		in := sp.Inputs[name]
		if in.IsLiteral() {
			continue
		}
		out.Inputs = append(out.Inputs, api.LineageInput{Name: name, Type: in.Type, Path: in.Path, Manifest: in.Manifest})
	}
	return out, nil
}

// lineageEnvironment says which environment a run ran in: a registered one keeps its name and
// version in the run's spec once resolved (workspace.ResolveEnvironment).
func lineageEnvironment(e job.Environment) api.LineageEnvironment {
	out := api.LineageEnvironment{Ref: e.Ref, Image: e.Image}
	switch {
	case e.Ref != "" && e.Name != "":
		out.Name, out.Version = e.Name, e.Version
	case e.Ref == "" && !e.IsEmpty():
		out.Inline = true
	}
	return out
}

// modelDeployments are the online and batch deployments whose model is a version of name, each
// with the version it serves.
func (s *assetRoutes) modelDeployments(ctx context.Context, name string, versions []model.Version, aliases map[string]string) ([]api.ModelDeployment, error) {
	var out []api.ModelDeployment
	online, err := s.cfg.Store.Serving.Deployments(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, d := range online {
		if ref, v, ok := deployedVersion(d.Spec.Model, name, versions, aliases); ok {
			out = append(out, api.ModelDeployment{Kind: api.DeploymentOnline, Endpoint: d.Spec.Endpoint,
				Deployment: d.Spec.Name, Ref: ref, Version: v, State: d.State})
		}
	}
	eps, err := s.cfg.Store.Serving.BatchEndpoints(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range eps {
		batch, err := s.cfg.Store.Serving.BatchDeployments(ctx, e.Spec.Name)
		if err != nil {
			return nil, err
		}
		for _, d := range batch {
			if ref, v, ok := deployedVersion(d.Spec.Model, name, versions, aliases); ok {
				out = append(out, api.ModelDeployment{Kind: api.DeploymentBatch, Endpoint: d.Spec.Endpoint,
					Deployment: d.Spec.Name, Ref: ref, Version: v})
			}
		}
	}
	return out, nil
}

// deployedVersion is the version of model name that a deployment's model serves, and its ref
// as the deployment names it; ok is false when the deployment's model is not one of name's
// versions (another model, or files of its own). The version is the one the record holds
// (an online deployment keeps what its ref resolved to), else the one whose files it took
// (Manifest), else the ref resolved now: its version, @latest, or the alias's version.
func deployedVersion(m serving.ModelRef, name string, versions []model.Version, aliases map[string]string) (ref, version string, ok bool) {
	refName, version, label := splitModelRef(m.Ref)
	if m.Ref == "" || refName != name {
		return "", "", false
	}
	switch {
	case m.Name == name && m.Version != "":
		return m.Ref, m.Version, true
	case label == "latest":
		if l, ok := model.Latest(versions); ok {
			version = l.Version
		}
	case label != "":
		version = aliases[label]
	}
	if m.Manifest != "" && !sameFiles(versions, version, m.Manifest) {
		newest := int64(-1)
		for _, v := range versions {
			if n := model.Number(v.Version); v.Manifest == m.Manifest && n > newest {
				version, newest = v.Version, n
			}
		}
	}
	return m.Ref, version, true
}

// sameFiles says whether version of the model has the files manifest.
func sameFiles(versions []model.Version, version, manifest string) bool {
	i := slices.IndexFunc(versions, func(v model.Version) bool { return v.Version == version })
	return i >= 0 && versions[i].Manifest == manifest
}

// splitModelRef reads a deployment's model ref, name:version, name@latest or name@alias (with
// or without azureml:), into its name and its version or label.
func splitModelRef(ref string) (name, version, label string) {
	ref = strings.TrimPrefix(strings.TrimSpace(ref), "azureml:")
	if n, l, ok := strings.Cut(ref, "@"); ok {
		return n, "", l
	}
	name, version, _ = strings.Cut(ref, ":")
	return name, version, ""
}

// runModels answers GET /api/jobs/{name}/models: the model versions registered from the run's
// outputs (archived ones too), by name and version: lineage read from the run's side.
func (s *assetRoutes) runModels(r *http.Request) ([]model.Version, error) {
	ctx := r.Context()
	run, err := s.cfg.Store.Runs.Run(ctx, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	all, err := s.cfg.Store.Assets.Models(ctx, "")
	if err != nil {
		return nil, err
	}
	out := []model.Version{}
	for _, v := range all {
		if rest, ok := strings.CutPrefix(v.Source, "azureml://jobs/"+run.ID+"/"); ok && rest != "" {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b model.Version) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(model.Number(a.Version), model.Number(b.Version))
	})
	return out, nil
}
