package workspace

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/curated"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// SettingEnvCacheMax is the workspace's default size limit of a node's environment cache, in bytes.
const SettingEnvCacheMax = "env_cache_max_bytes"

// DefaultEnvCacheMax is used when the workspace sets none: 20 GB.
const DefaultEnvCacheMax int64 = 20 << 30

// Create registers a new environment version (the next integer when none is given).
func (es *Environments) Create(ctx context.Context, env job.Environment) (*store.EnvironmentVersion, error) {
	if env.Name == "" {
		return nil, Invalidf("name: required")
	}
	if curated.Reserved(env.Name) {
		return nil, Invalidf("name: %q is reserved for Azure's curated environments (names starting with AzureML- or Microsoft); "+
			"register yours under another name and have an owner map the curated name to it: hangar curated-environment set %s --environment <your name>",
			env.Name, env.Name)
	}
	if env.Ref != "" {
		return nil, Invalidf("an environment file describes an environment; it cannot refer to another (%s)", env.Ref)
	}
	if env.IsEmpty() && env.Image == "" {
		return nil, Invalidf("environment %s: give an image, a conda_file, requirements, build or interpreter_path", env.Name)
	}
	ev, err := es.ws.Store.Assets.CreateEnvironment(ctx, store.EnvironmentVersion{Name: env.Name, Version: env.Version, Spec: env, CreatedAt: es.ws.Now()})
	if errors.Is(err, store.ErrExists) {
		return nil, Conflictf("environment %s version %s already exists; omit version to create the next one", env.Name, env.Version)
	}
	return ev, err
}

// parseEnvRef splits "name:version", "name@latest" or "name" (= latest).
func parseEnvRef(ref string) (name, version string) {
	if i := strings.LastIndex(ref, "@"); i > 0 {
		return ref[:i], ref[i+1:]
	}
	if i := strings.LastIndex(ref, ":"); i > 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, "latest"
}

// resolveEnvironment replaces a reference to a registered environment with its definition.
// Azure's curated environments (and registry references) run in what the workspace's mapping
// says (curated.go), or on the host with a warning that says how to map them.
func (w *Workspace) ResolveEnvironment(ctx context.Context, sp *job.Spec) ([]string, error) {
	ref := sp.Environment.Ref
	if ref == "" {
		return nil, nil
	}
	if name, ok := curated.Reference(ref); ok {
		return w.resolveCurated(ctx, sp, ref, name)
	}
	if strings.HasPrefix(ref, "azureml:/") || strings.HasPrefix(ref, "/subscriptions/") {
		return nil, Invalidf("environment: %s is an Azure resource id, which is not supported by this workspace; register the environment with hangar environment create", ref)
	}
	name, version := parseEnvRef(ref)
	ev, err := w.Store.Assets.Environment(ctx, name, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, Invalidf("environment: no environment %s in this workspace%s", describeRef(name, version), w.knownEnvironments(ctx))
	}
	if err != nil {
		return nil, err
	}
	resolved := ev.Spec
	resolved.Ref = ref
	sp.Environment = resolved
	return nil, nil
}

func describeRef(name, version string) string {
	if version == "latest" {
		return name
	}
	return name + " version " + version
}

func (w *Workspace) knownEnvironments(ctx context.Context) string {
	all, err := w.Store.Assets.Environments(ctx, "")
	if err != nil || len(all) == 0 {
		return " (none registered: see hangar environment create)"
	}
	names := make([]string, 0, len(all))
	for _, e := range all {
		names = append(names, e.Name)
	}
	slices.Sort(names)
	return " (known: " + strings.Join(slices.Compact(names), ", ") + ")"
}
