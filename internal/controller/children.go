package controller

import (
	"context"
	"errors"
	"maps"
	"strings"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// A sweep and a pipeline are both a parent run that no backend sees and whose children are
// ordinary runs the parent loop creates from what the store says (design 0015, 0016). What
// every parent and every child shares is written here once; each kind keeps only its own
// decisions.

// createRunFunc is the store's create for one kind of run: the run with its row, in one
// transaction; a run of that name is store.ErrExists.
type createRunFunc func(ctx context.Context, r *job.Run, events ...job.Event) error

// createParent stores a new parent run (kind "sweep" or "pipeline", create the store's for that
// kind); its change wakes the parent loop (package parents), which creates its children.
func (c *Controller) createParent(ctx context.Context, kind string, create createRunFunc, r *job.Run, events []job.Event, logAttrs ...any) error {
	if err := storeNewRun(ctx, create, r, events); err != nil {
		return err
	}
	c.Log.Info(kind+" created", append([]any{"run", r.ID}, logAttrs...)...)
	c.Changed(r.ID)
	return nil
}

// childRun is one child a parent asks for: a sweep's trial or a pipeline step's run.
type childRun struct {
	parent      *job.Run
	name        string // its run's name; <name>_<suffix> when another job has that name
	display     string
	description string
	compute     string
	reason      string // why it waits (its Queued event's reason)
	created     string // its first event's reason: which parent created it and as what
	tags        map[string]string
	spec        job.Spec
	// store is the store's create for the kind: the run with its child row, in one
	// transaction; exists is its answer when the parent has this child already.
	store  createRunFunc
	exists error
}

// childTags are a child's tags: its parent's, then its own, and the tag by which MLflow's
// clients and UI show it as the child of its parent.
func childTags(p *job.Run, own map[string]string) map[string]string {
	tags := maps.Clone(p.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, own)
	tags["mlflow.parentRunId"] = p.ID
	return tags
}

// createChild stores a child's run once: nil (and no error) when the parent has it already, as
// after a restart between its creation and the pass that created it.
func (c *Controller) createChild(ctx context.Context, ch childRun) (*job.Run, error) {
	name := ch.name
	for attempt := 0; ; attempt++ {
		now := c.Now()
		sp := ch.spec
		sp.Name, sp.DisplayName = name, ch.display
		// Its access to secrets is its parent's submitter's (secretaccess.go), whatever the
		// step's or trial's spec said.
		sp.Properties = workspace.StampSubmitter(maps.Clone(sp.Properties), workspace.Submitter(&ch.parent.Spec))
		r := &job.Run{ID: name, DisplayName: ch.display, ExperimentName: ch.parent.ExperimentName,
			Description: ch.description, Tags: ch.tags, Compute: ch.compute, Status: job.Queued,
			StatusReason: ch.reason, CreatedAt: now, Spec: sp, Attempt: 1}
		err := ch.store(ctx, r, creationEvents(now, ch.created, ch.reason)...)
		switch {
		case errors.Is(err, ch.exists):
			return nil, nil
		case errors.Is(err, store.ErrExists) && attempt < 3:
			// A job of that name exists already: the child takes another.
			n, _ := newRunName()
			name = ch.name + "_" + n[strings.LastIndexByte(n, '_')+1:]
			continue
		case err != nil:
			return nil, err
		}
		return r, nil
	}
}

// queueChild readies a new child as queue readies a job: its outputs' paths recorded, then a
// sweep handed to the parent loop, or a command run to the run loop (failed at once when its
// command does not bind).
func (c *Controller) queueChild(ctx context.Context, r *job.Run) error {
	if stored, err := c.Store.Runs.Run(ctx, r.ID); err != nil {
		return err
	} else if err := c.Workspace.RecordOutputPaths(ctx, stored); err != nil {
		return err
	}
	if r.Spec.Sweep != nil { // a sweep step is a sweep: the parent loop, woken by its change, creates its trials
		c.Changed(r.ID)
		return nil
	}
	sp := r.Spec
	if _, err := binding.Bind(sp.Command, spec.BindValues(&sp)); err != nil {
		_, terr := c.transition(ctx, r.ID, job.Failed, "command: "+err.Error(), nil, nil)
		return terr
	}
	c.Changed(r.ID)
	c.Kick()
	return nil
}
