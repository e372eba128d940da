package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/curated"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// Curated environments (Azure's AzureML-<name> and azureml://registries/.../environments/<name>)
// run in what the workspace's mapping says: Hangar's defaults (curated.Defaults), which owners
// replace, remove or add to. An owner's mapping is a setting, curated_environment.<name in lower
// case>, whose value is the mapping as JSON.

// settingCuratedPrefix starts the key of each owner's mapping.
const settingCuratedPrefix = "curated_environment."

// Curated lists the mappings in force and, after them, the defaults owners removed
// (Removed), sorted by name.
func (es *Environments) Curated(ctx context.Context) ([]curated.Mapping, error) {
	owned, err := es.ws.ownedCurated(ctx)
	if err != nil {
		return nil, err
	}
	out := curated.Effective(curated.Defaults(), owned)
	for _, m := range owned {
		if m.Removed {
			m.Builtin = true
			out = append(out, m)
		}
	}
	return out, nil
}

// ownedCurated reads the owners' mappings and removals.
func (w *Workspace) ownedCurated(ctx context.Context) ([]curated.Mapping, error) {
	rows, err := w.Store.Settings.Settings(ctx, settingCuratedPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]curated.Mapping, 0, len(rows))
	for key, v := range rows {
		var m curated.Mapping
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return nil, fmt.Errorf("setting %s: %w", key, err)
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b curated.Mapping) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// SetCurated stores an owner's mapping: a registered environment that exists (not
// itself curated), or an environment definition (an image, a conda file, requirements or an
// interpreter).
func (es *Environments) SetCurated(ctx context.Context, m curated.Mapping) (*curated.Mapping, error) {
	if err := curated.CheckName(m.Name); err != nil {
		return nil, Invalidf("%v", err)
	}
	if err := es.checkCuratedTarget(ctx, m.Environment); err != nil {
		return nil, err
	}
	m.Builtin, m.Removed = false, false
	if err := es.putCurated(ctx, m); err != nil {
		return nil, err
	}
	es.ws.Log.Info("curated environment mapped", "name", m.Name, "runs_in", curated.RunsIn(m.Environment))
	return &m, nil
}

// checkCuratedTarget refuses what a mapping cannot run a job in.
func (es *Environments) checkCuratedTarget(ctx context.Context, e job.Environment) error {
	if e.Ref == "" {
		if e.IsEmpty() && e.Image == "" {
			return Invalidf("environment: give a registered environment, an image, a conda file, requirements or an interpreter")
		}
		if e.BuildPath != "" {
			return Invalidf("environment.build: a docker build context is not kept with a mapping; build the image and map the curated name to it")
		}
		return nil
	}
	if _, ok := curated.Reference(e.Ref); ok || strings.Contains(e.Ref, "/") {
		return Invalidf("environment: %s is not an environment of this workspace; map the curated name to one registered with hangar environment create", e.Ref)
	}
	if e.Image != "" || e.CondaSpec != "" || e.RequirementsText != "" || e.InterpreterPath != "" {
		return Invalidf("environment: give either a registered environment (%s) or a definition, not both", e.Ref)
	}
	name, version := parseEnvRef(e.Ref)
	if _, err := es.ws.Store.Assets.Environment(ctx, name, version); errors.Is(err, store.ErrNotFound) {
		return Invalidf("environment: no environment %s in this workspace%s", describeRef(name, version), es.ws.knownEnvironments(ctx))
	} else if err != nil {
		return err
	}
	return nil
}

// RemoveCurated removes an owner's mapping (a default of the same name then applies
// again) or a default (the name is then unmapped), and returns what is in force for the name
// now (Removed when nothing).
func (es *Environments) RemoveCurated(ctx context.Context, name string) (*curated.Mapping, error) {
	owned, err := es.ws.ownedCurated(ctx)
	if err != nil {
		return nil, err
	}
	same := func(m curated.Mapping) bool { return strings.EqualFold(m.Name, name) }
	i := slices.IndexFunc(owned, same)
	j := slices.IndexFunc(curated.Defaults(), same)
	switch {
	case i >= 0 && owned[i].Removed:
		return nil, Conflictf("the default mapping of %s is removed already; hangar curated-environment set %s maps the name again", name, name)
	case i >= 0:
		if err := es.ws.Store.Settings.DeleteSetting(ctx, curatedKey(name)); err != nil {
			return nil, err
		}
		es.ws.Log.Info("curated environment mapping removed", "name", name)
		if j >= 0 {
			d := curated.Defaults()[j]
			return &d, nil
		}
		return &curated.Mapping{Name: owned[i].Name, Removed: true}, nil
	case j >= 0:
		m := curated.Mapping{Name: curated.Defaults()[j].Name, Removed: true}
		if err := es.putCurated(ctx, m); err != nil {
			return nil, err
		}
		es.ws.Log.Info("curated environment default removed", "name", m.Name)
		m.Builtin = true
		return &m, nil
	}
	return nil, NotFoundf("no mapping of curated environments named %s (hangar curated-environment list)", name)
}

func curatedKey(name string) string { return settingCuratedPrefix + strings.ToLower(name) }

func (es *Environments) putCurated(ctx context.Context, m curated.Mapping) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return es.ws.Store.Settings.SetSetting(ctx, curatedKey(m.Name), string(b))
}

// resolveCurated gives a job that names Azure's curated environment name (from ref) the
// environment its mapping says, with a warning that says so; without a mapping the job runs
// in the host environment, with a warning that says exactly how an owner maps the name.
func (w *Workspace) resolveCurated(ctx context.Context, sp *job.Spec, ref, name string) ([]string, error) {
	ms, err := w.Environments.Curated(ctx)
	if err != nil {
		return nil, err
	}
	m, ok := curated.Match(ms, name)
	if !ok || m.Removed {
		return []string{unmappedCurated(ref, name)}, nil
	}
	env := m.Environment
	if env.Ref != "" {
		envName, version := parseEnvRef(env.Ref)
		ev, err := w.Store.Assets.Environment(ctx, envName, version)
		if errors.Is(err, store.ErrNotFound) {
			return nil, Invalidf("environment: %s is mapped (mapping %s) to environment %s, which this workspace does not have; an owner maps it again with hangar curated-environment set %s --environment NAME",
				ref, m.Name, env.Ref, m.Name)
		} else if err != nil {
			return nil, err
		}
		env = ev.Spec
	}
	env.Ref = ref
	sp.Environment = env
	return []string{fmt.Sprintf("environment %s is Azure's curated %s; this workspace runs it in %s (mapping %s; hangar curated-environment list)",
		ref, name, curated.RunsIn(m.Environment), m.Name)}, nil
}

// unmappedCurated is the warning of a curated name without a mapping.
func unmappedCurated(ref, name string) string {
	return fmt.Sprintf("environment %s is Azure's curated %s, which no mapping of this workspace names, so the command runs in the host environment. "+
		"An owner maps it with: hangar curated-environment set %s --environment <a registered environment>[:<version>] "+
		"(or --image IMAGE, --conda-file FILE, --interpreter PATH, -f environment.yml); hangar curated-environment list shows the mappings",
		ref, name, name)
}
