package controller

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/pattern"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/parallel"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

var runNameRE = pattern.New(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$`)

// A Creator makes a submitted job of its type into a run over the run core c: a command's
// queued run, a sweep's or a pipeline's parent. lead.go registers one per job type
// (Config.Creators), as it does a backend per compute type.
type Creator func(ctx context.Context, c *Controller, sp job.Spec, warnings []string) (*job.Run, error)

// Create validates a submitted job against the workspace and makes its run with the creator of
// its type.
func (c *Controller) Create(ctx context.Context, req api.CreateJobRequest) (*job.Run, error) {
	sp := req.Spec
	if sp.Import != nil || sp.Type == workspace.ImportTypeData {
		return nil, invalidf("import: set by hangar data import only (POST /api/data-imports)")
	}
	if sp.Type == "" {
		sp.Type = "command"
	}
	typ := sectionType(sp)
	if sp.Type == "parallel" || sp.Parallel != nil {
		typ = "parallel"
	}
	return c.create(ctx, typ, sp, append([]string(nil), req.Warnings...))
}

// sectionType is the type a job is made as: a sweep or a pipeline when its type says so or it
// has that section, its type otherwise.
func sectionType(sp job.Spec) string {
	switch {
	case sp.Type == "sweep" || sp.Sweep != nil:
		return "sweep"
	case sp.Type == "pipeline" || sp.Pipeline != nil:
		return "pipeline"
	}
	return sp.Type
}

func (c *Controller) create(ctx context.Context, typ string, sp job.Spec, warnings []string) (*job.Run, error) {
	create, ok := c.Creators[typ]
	if !ok {
		return nil, invalidf("job type %q is not supported (command, parallel, sweep and pipeline jobs are)", sp.Type)
	}
	return create(ctx, c, sp, warnings)
}

// CommandJob queues a command job's run; serve is Hangar's to set (an online deployment's
// replica: Queue).
func CommandJob(ctx context.Context, c *Controller, sp job.Spec, warnings []string) (*job.Run, error) {
	if sp.Serve != nil {
		return nil, invalidf("serve: set by Hangar for online deployments' replicas only (use online-deployment create)")
	}
	return c.queue(ctx, sp, warnings)
}

// ParallelJob runs a parallel job as a command, Hangar's driver over its mini-batches, made as
// its converted spec's type says.
func ParallelJob(ctx context.Context, c *Controller, sp job.Spec, warnings []string) (*job.Run, error) {
	sp, err := parallel.ToCommand(sp)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	return c.create(ctx, sectionType(sp), sp, warnings)
}

// SweepJob makes a sweep's parent run; the parent loop (package parents) starts its trials.
func SweepJob(ctx context.Context, c *Controller, sp job.Spec, warnings []string) (*job.Run, error) {
	return c.createSweep(ctx, sp, warnings)
}

// PipelineJob makes a pipeline's parent run; the parent loop (package parents) starts its steps.
func PipelineJob(ctx context.Context, c *Controller, sp job.Spec, warnings []string) (*job.Run, error) {
	return c.createPipeline(ctx, sp, warnings)
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
	if err := storeNewRun(ctx, c.Store.RunWrites.CreateRun, r, events); err != nil {
		return nil, err
	}
	if err := c.Workspace.RecordOutputPaths(ctx, r); err != nil {
		return nil, err
	}
	c.Log.Info("job created", "run", r.ID, "compute", r.Compute)
	c.Changed(r.ID)
	c.Kick()
	return r, nil
}

// validatedRun is a job's new run, its spec resolved against the workspace (workspace.Resolve,
// check as there) and named, Queued for reason ("": for its compute target).
func (c *Controller) validatedRun(ctx context.Context, sp job.Spec, check *job.Spec, reason string, warnings []string) (*job.Run, []job.Event, error) {
	target, w, err := c.Workspace.Resolve(ctx, &sp, check)
	if err != nil {
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
