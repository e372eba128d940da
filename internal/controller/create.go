package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/pattern"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/parallel"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/store"
)

// SettingDefaultCompute names the target used when a job names none.
const SettingDefaultCompute = "default_compute"

var runNameRE = pattern.New(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$`)

// Create validates a submitted job against the workspace and queues its run.
func (c *Controller) Create(ctx context.Context, req api.CreateJobRequest) (*job.Run, error) {
	sp := req.Spec
	warnings := append([]string(nil), req.Warnings...)
	if sp.Type == "" {
		sp.Type = "command"
	}
	if sp.Type == "parallel" || sp.Parallel != nil { // a parallel job runs as a command: Hangar's driver
		var err error
		if sp, err = parallel.ToCommand(sp); err != nil {
			return nil, invalidf("%v", err)
		}
	}
	if sp.Type == "sweep" || sp.Sweep != nil {
		return c.createSweep(ctx, sp, warnings)
	}
	if sp.Type == "pipeline" || sp.Pipeline != nil {
		return c.createPipeline(ctx, sp, warnings)
	}
	if sp.Type != "command" {
		return nil, invalidf("job type %q is not supported (command, parallel, sweep and pipeline jobs are)", sp.Type)
	}
	if sp.Serve != nil {
		return nil, invalidf("serve: set by Hangar for online deployments' replicas only (use online-deployment create)")
	}
	return c.queue(ctx, sp, warnings)
}

// queue validates a command job against the workspace and queues its run (a user's job, or a
// deployment's replica).
func (c *Controller) queue(ctx context.Context, sp job.Spec, warnings []string) (*job.Run, error) {
	// A replica whose image serves by its own entrypoint has no command (design 0014).
	if strings.TrimSpace(sp.Command) == "" && (sp.Serve == nil || !sp.Serve.Entrypoint) {
		return nil, invalidf("command: required")
	}
	// The CLI checks this too; a job sent straight to the API is refused here rather than failing
	// later in Preparing.
	if _, err := binding.Bind(sp.Command, spec.BindValues(&sp)); err != nil {
		return nil, invalidf("command: %v", err)
	}
	r, events, err := c.validatedRun(ctx, sp, nil, "", warnings)
	if err != nil {
		return nil, err
	}
	if err := storeNewRun(ctx, c.Store.CreateRun, r, events); err != nil {
		return nil, err
	}
	if err := c.recordOutputPaths(ctx, r); err != nil {
		return nil, err
	}
	c.Log.Info("job created", "run", r.ID, "compute", r.Compute)
	c.Changed(r.ID)
	c.Kick()
	return r, nil
}

// validatedRun is a job's new run, its spec resolved against the workspace (resolveForTarget,
// check as there) and named, Queued for reason ("": for its compute target).
func (c *Controller) validatedRun(ctx context.Context, sp job.Spec, check *job.Spec, reason string, warnings []string) (*job.Run, []job.Event, error) {
	target, w, err := c.resolveForTarget(ctx, &sp, check)
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkSecretRefs(ctx, Submitter(&sp), &sp, check); err != nil { // jobsecrets.go
		return nil, nil, err
	}
	name, display, err := runNames(&sp)
	if err != nil {
		return nil, nil, err
	}
	if reason == "" {
		reason = "waiting for compute " + target.Name
	}
	r, events := c.queuedRun(sp, name, display, target.Name, reason, append(warnings, w...))
	return r, events, nil
}

// runNames is a new job's run name (its spec's, or a fresh one) and display name; it defaults
// the spec's experiment.
func runNames(sp *job.Spec) (name, display string, err error) {
	name, display = newRunName()
	if sp.Name != "" {
		if !runNameRE.MatchString(sp.Name) {
			return "", "", invalidf("name: %q must start with a letter or digit and hold only letters, digits, '-' and '_'", sp.Name)
		}
		name = sp.Name
	}
	if sp.DisplayName != "" {
		display = sp.DisplayName
	}
	if sp.ExperimentName == "" {
		sp.ExperimentName = "Default"
	}
	return name, display, nil
}

// queuedRun is a job's new run, Queued on target for reason, with its creation events.
func (c *Controller) queuedRun(sp job.Spec, name, display, target, reason string, warnings []string) (*job.Run, []job.Event) {
	now := c.Now()
	r := &job.Run{
		ID: name, DisplayName: display, ExperimentName: sp.ExperimentName, Description: sp.Description,
		Tags: sp.Tags, Compute: target, Status: job.Queued, StatusReason: reason,
		CreatedAt: now, Warnings: warnings, Spec: sp, Attempt: 1,
	}
	r.Spec.Name = name
	return r, creationEvents(now, "created", reason)
}

func creationEvents(now time.Time, created, queued string) []job.Event {
	return []job.Event{
		{Time: now, To: job.NotStarted, Reason: created},
		{Time: now, From: job.NotStarted, To: job.Queued, Reason: queued},
	}
}

// storeNewRun stores a job's new run with create; a job of that name is a conflict.
func storeNewRun(ctx context.Context, create createRunFunc, r *job.Run, events []job.Event) error {
	if err := create(ctx, r, events...); errors.Is(err, store.ErrExists) {
		return conflictf("name: a job named %s already exists", r.ID)
	} else if err != nil {
		return err
	}
	return nil
}

// resolveForTarget resolves what a job needs from the workspace (its target, environment and
// uploaded data) and checks what runs on the target against it: the job itself, or what
// check stands for (a sweep's sample trial) when not nil.
func (c *Controller) resolveForTarget(ctx context.Context, sp, check *job.Spec) (*compute.Target, []string, error) {
	target, err := c.resolveJobCompute(ctx, sp) // serverless.go
	if err != nil {
		return nil, nil, err
	}
	sp.Compute = target.Name
	warnings, err := c.resolveEnvironment(ctx, sp)
	if err != nil {
		return nil, nil, err
	}
	if check == nil {
		check = sp
	}
	w, err := c.checkForTarget(*check, target)
	if err != nil {
		return nil, nil, err
	}
	if err := c.resolveData(ctx, sp); err != nil {
		return nil, nil, err
	}
	return target, append(warnings, w...), nil
}

// resolveCompute finds the job's target: the named one, or the workspace default.
func (c *Controller) resolveCompute(ctx context.Context, name string) (*compute.Target, error) {
	if name == "" {
		def, ok, err := c.Store.Setting(ctx, SettingDefaultCompute)
		if err != nil {
			return nil, err
		}
		name = compute.LocalName
		if ok && def != "" {
			name = def
		}
	}
	if strings.EqualFold(name, compute.ServerlessName) {
		return c.serverlessTarget(ctx) // serverless.go: the configured pool, or this machine's
	}
	t, err := c.Store.Compute(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		names := c.computeNames(ctx)
		return nil, invalidf("compute: no compute target named %q in this workspace (known: %s)", name, strings.Join(names, ", "))
	}
	return t, err
}

// checkForTarget refuses what the target cannot run and warns about what it ignores.
func (c *Controller) checkForTarget(sp job.Spec, t *compute.Target) ([]string, error) {
	var warnings []string
	if _, ok := c.Backends[t.Type]; !ok {
		return nil, invalidf("compute: %s targets (%s) cannot run jobs in this version", t.Type, t.Name)
	}
	if err := c.checkContainer(sp, t); err != nil {
		return nil, err
	}
	if err := c.checkSpec(sp, t); err != nil {
		return nil, err
	}
	if t.Type == compute.TypeLocal {
		if n := sp.Resources.InstanceCount; n > 1 {
			return nil, invalidf("resources.instance_count: the local target has one node, the job asks for %d; use a cluster, or compute: serverless", n)
		}
		if sp.Resources.InstanceType != "" {
			warnings = append(warnings, "resources.instance_type is ignored on the local target")
		}
	}
	for name, o := range sp.Outputs {
		if _, written := outputDatastorePath("", name, o); o.Path != "" && !written {
			warnings = append(warnings, fmt.Sprintf("outputs.%s.path is ignored: outputs are kept in the workspace under the job", name))
		}
	}
	sort.Strings(warnings)
	return warnings, nil
}

// resolveData checks uploaded inputs and resolves references to other jobs' outputs.
func (c *Controller) resolveData(ctx context.Context, sp *job.Spec) error {
	if sp.CodeSnapshot != "" && !c.Blobs.Has(sp.CodeSnapshot) {
		return invalidf("code: snapshot %s was not uploaded", sp.CodeSnapshot)
	}
	for name, in := range sp.Inputs {
		if in.IsLiteral() {
			continue
		}
		if in.Manifest != "" {
			if !c.Blobs.Has(in.Manifest) {
				return invalidf("inputs.%s: data %s was not uploaded", name, in.Manifest)
			}
			continue
		}
		resolved, err := c.resolveURI(ctx, name, in, sp.Compute)
		if err != nil {
			return err
		}
		sp.Inputs[name] = resolved
	}
	return nil
}

// resolveURI handles a data input given as a URI.
func (c *Controller) resolveURI(ctx context.Context, name string, in job.Input, target string) (job.Input, error) {
	p := in.Path
	switch {
	case strings.HasPrefix(p, "http://"), strings.HasPrefix(p, "https://"):
		return in, nil
	case strings.HasPrefix(p, "azureml://jobs/"):
		return c.resolveJobOutput(ctx, name, in)
	case strings.HasPrefix(p, "azureml://datastores/"):
		return c.resolveDatastoreInput(ctx, name, in, target) // datastores.go
	case in.Mode == "direct":
		return in, nil // the user's code handles the URI itself
	case strings.HasPrefix(p, "azureml:"):
		return c.resolveAssetRef(ctx, name, in, target) // a data asset or a registered model (data.go)
	default:
		return in, invalidf("inputs.%s.path: %s is not supported by this workspace (use a local path, http(s), azureml://jobs/..., or mode: direct)", name, p)
	}
}

// resolveJobOutput turns azureml://jobs/<job>/outputs/<output>[/paths/<p>] into that output's manifest.
func (c *Controller) resolveJobOutput(ctx context.Context, name string, in job.Input) (job.Input, error) {
	rest := strings.TrimPrefix(in.Path, "azureml://jobs/")
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 3 || parts[1] != "outputs" {
		return in, invalidf("inputs.%s.path: expected azureml://jobs/<job>/outputs/<output>, got %s", name, in.Path)
	}
	if len(parts) == 4 && !strings.HasPrefix(parts[3], "paths/") {
		return in, invalidf("inputs.%s.path: expected .../outputs/<output>/paths/<path>, got %s", name, in.Path)
	}
	if len(parts) == 4 {
		return in, invalidf("inputs.%s.path: sub-paths of job outputs are not supported yet (%s)", name, in.Path)
	}
	src, err := c.Store.Run(ctx, parts[0])
	if err != nil {
		return in, invalidf("inputs.%s.path: no job named %s", name, parts[0])
	}
	out := parts[2]
	h := src.NamedOutputs[out]
	if out == "default" || out == "artifacts" {
		h = src.ArtifactsHash
	}
	if h == "" {
		return in, invalidf("inputs.%s.path: job %s has no output %q (status %s)", name, src.ID, out, src.Status)
	}
	in.Manifest = h
	return in, nil
}

// checkContainer refuses, on a target with require_container, a job without an image or a node
// without a container runtime.
func (c *Controller) checkContainer(sp job.Spec, t *compute.Target) error {
	st, err := compute.Load(*t)
	if err != nil || !st.Spec.RequiresContainer() {
		return err
	}
	if sp.Environment.Image == "" {
		return invalidf("environment.image: compute %s requires jobs to run in a container image (require_container: true)", t.Name)
	}
	runtime := ""
	if st.Node != nil {
		runtime = st.Node.ContainerRuntime
	}
	if t.Type == compute.TypeLocal && c.LocalRuntime != nil {
		runtime = c.LocalRuntime()
	}
	if runtime == "" {
		return invalidf("compute %s requires containers (require_container: true) but its node has no container runtime (docker or podman)", t.Name)
	}
	return nil
}
