package workspace

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// SettingDefaultCompute names the target used when a job names none.
const SettingDefaultCompute = "default_compute"

// Resolve resolves a job against the workspace, in place: its compute target (the named one,
// the default, or a serverless cluster), environment and inputs (uploaded data, data assets,
// datastores, models, other jobs' outputs); it checks what runs on the target against it (the job
// itself, or what check stands for when not nil: a sweep's sample trial, a pipeline step) and
// that its submitter may use the secrets it references. It returns the target and the warnings
// (what the target ignores). The errors are *Error, with the spec's field paths.
func (w *Workspace) Resolve(ctx context.Context, sp, check *job.Spec) (*compute.Target, []string, error) {
	target, warnings, err := w.resolveForTarget(ctx, sp, check)
	if err != nil {
		return nil, nil, err
	}
	if err := w.checkSecretRefs(ctx, Submitter(sp), sp, check); err != nil { // jobsecrets.go
		return nil, nil, err
	}
	return target, warnings, nil
}

// resolveForTarget resolves what a job needs from the workspace (its target, environment and
// uploaded data) and checks what runs on the target against it: the job itself, or what
// check stands for when not nil.
func (w *Workspace) resolveForTarget(ctx context.Context, sp, check *job.Spec) (*compute.Target, []string, error) {
	target, err := w.ResolveJobCompute(ctx, sp) // serverless.go
	if err != nil {
		return nil, nil, err
	}
	sp.Compute = target.Name
	warnings, err := w.ResolveEnvironment(ctx, sp)
	if err != nil {
		return nil, nil, err
	}
	if check == nil {
		check = sp
	}
	more, err := w.CheckForTarget(*check, target)
	if err != nil {
		return nil, nil, err
	}
	if err := w.ResolveInputs(ctx, sp); err != nil {
		return nil, nil, err
	}
	return target, append(warnings, more...), nil
}

// ResolveCompute finds the job's target: the named one, or the workspace default.
func (w *Workspace) ResolveCompute(ctx context.Context, name string) (*compute.Target, error) {
	if name == "" {
		def, ok, err := w.Store.Settings.Setting(ctx, SettingDefaultCompute)
		if err != nil {
			return nil, err
		}
		name = compute.LocalName
		if ok && def != "" {
			name = def
		}
	}
	if strings.EqualFold(name, compute.ServerlessName) {
		return w.serverlessTarget(ctx) // serverless.go: the configured pool, or this machine's
	}
	t, err := w.Store.Cluster.Compute(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		names := w.computeNames(ctx)
		return nil, Invalidf("compute: no compute target named %q in this workspace (known: %s)", name, strings.Join(names, ", "))
	}
	return t, err
}

// CheckForTarget refuses what the target cannot run and warns about what it ignores.
func (w *Workspace) CheckForTarget(sp job.Spec, t *compute.Target) ([]string, error) {
	var warnings []string
	if _, ok := w.Backends[t.Type]; !ok {
		return nil, Invalidf("compute: %s targets (%s) cannot run jobs in this version", t.Type, t.Name)
	}
	if err := w.checkContainer(sp, t); err != nil {
		return nil, err
	}
	if err := w.checkSpec(sp, t); err != nil {
		return nil, err
	}
	if t.Type == compute.TypeLocal {
		if n := sp.Resources.InstanceCount; n > 1 {
			return nil, Invalidf("resources.instance_count: the local target has one node, the job asks for %d; use a cluster, or compute: serverless", n)
		}
		if sp.Resources.InstanceType != "" {
			warnings = append(warnings, "resources.instance_type is ignored on the local target")
		}
	}
	for name, o := range sp.Outputs {
		if w.outputPathIgnored(name, o) { // objectdata.go
			warnings = append(warnings, fmt.Sprintf("outputs.%s.path is ignored: outputs are kept in the workspace under the job", name))
		}
	}
	sort.Strings(warnings)
	return warnings, nil
}

// ResolveInputs checks uploaded inputs, resolves references to other jobs' outputs, and places
// the inputs and outputs that lie in object stores (objectdata.go).
func (w *Workspace) ResolveInputs(ctx context.Context, sp *job.Spec) error {
	if sp.CodeSnapshot != "" && !w.Blobs.Has(sp.CodeSnapshot) {
		return Invalidf("code: snapshot %s was not uploaded", sp.CodeSnapshot)
	}
	for name, in := range sp.Inputs {
		if in.IsLiteral() {
			continue
		}
		// A location is the workspace's to say (its credentials go where it points): one that
		// came with the spec is derived again from the path.
		in.Store = nil
		sp.Inputs[name] = in
		if in.Manifest != "" {
			if !w.Blobs.Has(in.Manifest) {
				return Invalidf("inputs.%s: data %s was not uploaded", name, in.Manifest)
			}
			continue
		}
		resolved, err := w.resolveURI(ctx, name, in, sp.Compute)
		if err != nil {
			return err
		}
		sp.Inputs[name] = resolved
	}
	return w.resolveOutputs(ctx, sp)
}

// resolveURI handles a data input given as a URI.
func (w *Workspace) resolveURI(ctx context.Context, name string, in job.Input, target string) (job.Input, error) {
	p := in.Path
	switch {
	case datastore.IsObjectURI(p):
		return w.resolveObjectURI(ctx, name, in) // objectdata.go
	case strings.HasPrefix(p, "http://"), strings.HasPrefix(p, "https://"):
		return in, nil
	case strings.HasPrefix(p, "azureml://jobs/"):
		return w.ResolveJobOutput(ctx, name, in)
	case strings.HasPrefix(p, "azureml://datastores/"):
		return w.resolveDatastoreInput(ctx, name, in, target) // datastores.go
	case in.Mode == "direct":
		return in, nil // the user's code handles the URI itself
	case strings.HasPrefix(p, "azureml:"):
		return w.resolveAssetRef(ctx, name, in, target) // a data asset or a registered model (data.go)
	default:
		return in, Invalidf("inputs.%s.path: %s is not supported by this workspace (use a local path, http(s), azureml://jobs/..., azureml://datastores/..., s3://, gs://, wasbs://, abfss://, or mode: direct)", name, p)
	}
}

// ResolveJobOutput turns azureml://jobs/<job>/outputs/<output>[/paths/<p>] into that output's
// manifest, or, for an output the job wrote to an object store, into its place there.
func (w *Workspace) ResolveJobOutput(ctx context.Context, name string, in job.Input) (job.Input, error) {
	rest := strings.TrimPrefix(in.Path, "azureml://jobs/")
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 3 || parts[1] != "outputs" {
		return in, Invalidf("inputs.%s.path: expected azureml://jobs/<job>/outputs/<output>, got %s", name, in.Path)
	}
	if len(parts) == 4 && !strings.HasPrefix(parts[3], "paths/") {
		return in, Invalidf("inputs.%s.path: expected .../outputs/<output>/paths/<path>, got %s", name, in.Path)
	}
	if len(parts) == 4 {
		return in, Invalidf("inputs.%s.path: sub-paths of job outputs are not supported yet (%s)", name, in.Path)
	}
	src, err := w.Store.Runs.Run(ctx, parts[0])
	if err != nil {
		return in, Invalidf("inputs.%s.path: no job named %s", name, parts[0])
	}
	out := parts[2]
	if bound, ok, err := jobStoreOutput(name, in, src, out); ok { // objectdata.go
		return bound, err
	}
	h := src.NamedOutputs[out]
	if out == "default" || out == "artifacts" {
		h = src.ArtifactsHash
	}
	if h == "" {
		return in, Invalidf("inputs.%s.path: job %s has no output %q (status %s)", name, src.ID, out, src.Status)
	}
	in.Manifest = h
	return in, nil
}

// checkContainer refuses, on a target with require_container, a job without an image or a node
// without a container runtime.
func (w *Workspace) checkContainer(sp job.Spec, t *compute.Target) error {
	st, err := compute.Load(*t)
	if err != nil || !st.Spec.RequiresContainer() {
		return err
	}
	if sp.Environment.Image == "" {
		return Invalidf("environment.image: compute %s requires jobs to run in a container image (require_container: true)", t.Name)
	}
	runtime := ""
	if st.Node != nil {
		runtime = st.Node.ContainerRuntime
	}
	if t.Type == compute.TypeLocal && w.LocalRuntime != nil {
		runtime = w.LocalRuntime()
	}
	if runtime == "" {
		return Invalidf("compute %s requires containers (require_container: true) but its node has no container runtime (docker or podman)", t.Name)
	}
	return nil
}

// checkSpec asks the target's backend, when it can tell (backend.SpecChecker), whether the
// target can ever run the job.
func (w *Workspace) checkSpec(sp job.Spec, t *compute.Target) error {
	sc, ok := w.Backends[t.Type].(backend.SpecChecker)
	if !ok {
		return nil
	}
	if err := sc.CheckSpec(context.Background(), *t, sp); err != nil {
		return Invalidf("%v", err)
	}
	return nil
}
