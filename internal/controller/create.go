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
)

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
