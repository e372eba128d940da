package parents

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pipeline"
	"github.com/hangar-ml/hangar/internal/store"
	hpo "github.com/hangar-ml/hangar/internal/sweep"
	"github.com/hangar-ml/hangar/internal/tick"
)

// period is the parent loop's period (it is also kicked on any run change: a parent created or
// canceled, a child ended).
const period = time.Second

// Runs is what the parent loop asks of the run core, the one writer of run state.
type Runs interface {
	// Transition moves a run (a parent, or a child the loop stops) to state to.
	Transition(ctx context.Context, id string, to job.State, reason string) (*job.Run, error)
	// CreateTrialRun creates trial index of sweep p, with its spec and parameters, and queues
	// it; one created already is left as it is.
	CreateTrialRun(ctx context.Context, p *job.Run, index int, params json.RawMessage, sp job.Spec) error
	// CreateStepRun creates the run of pipeline p's step (its inputs bound in sp) and queues
	// it; one created already is left as it is.
	CreateStepRun(ctx context.Context, p *job.Run, step, cacheKey string, sp job.Spec) error
	// SetNamedOutputs makes named a parent's outputs (its best trial's, its steps').
	SetNamedOutputs(ctx context.Context, id string, named map[string]string) error
	// Changed tells the run core's subscribers a run changed; Kick asks the run loop for a pass.
	Changed(id string)
	Kick()
	// OnChange subscribes to run changes.
	OnChange(fn func(runID string))
}

// Resolver binds a starting pipeline step's inputs against the workspace.
type Resolver interface {
	// ResolveStepInput binds input in of step to ref's output of the producer run src.
	ResolveStepInput(ctx context.Context, pl job.PipelineRun, step, in string, ref job.StepRef, src string) (job.Input, error)
	// ResolveStartData resolves the step's inputs at workspaceblobstore paths left for when it
	// starts.
	ResolveStartData(ctx context.Context, p *job.Run, step string, sp *job.Spec) error
}

// Store is the parents' own tables: sweeps' trials and outcomes, pipelines' steps.
type Store interface {
	ActiveSweeps(ctx context.Context) ([]*job.Run, error)
	Trials(ctx context.Context, parent string) ([]store.Trial, error)
	StopTrial(ctx context.Context, parent string, index int, reason string) error
	SweepOutcome(ctx context.Context, id string) (store.SweepOutcome, error)
	SetSweepOutcome(ctx context.Context, id string, o store.SweepOutcome) error
	MetricSeries(ctx context.Context, runID, name string) ([]job.Metric, error)
	ActivePipelines(ctx context.Context) ([]*job.Run, error)
	PipelineSteps(ctx context.Context, pipeline string) ([]store.Step, error)
	PutStep(ctx context.Context, st store.Step) error
	CachedStep(ctx context.Context, key string) (string, error)
	SetStepReason(ctx context.Context, pipeline, step, reason string) error
	SetPipelineReason(ctx context.Context, id, reason string) error
}

// RunReader reads a run.
type RunReader interface {
	Run(ctx context.Context, id string) (*job.Run, error)
}

// Config is what New needs; Now, the deciders and Log have defaults.
type Config struct {
	Runs     Runs
	Resolver Resolver
	Store    Store
	Reader   RunReader
	Log      *slog.Logger
	Now      func() time.Time
	// SweepDecide and PipelineDecide are the engines (hpo.Decide and pipeline.Decide unless
	// set: a test's scripted engine).
	SweepDecide    func(hpo.Config, hpo.State) hpo.Decision
	PipelineDecide func(job.PipelineRun, pipeline.State) pipeline.Decision
}

// Loop drives every active sweep and pipeline. Everything it knows is in the store, but its
// wake-up.
type Loop struct {
	cfg  Config // with its defaults
	kick tick.Kick
}

// New returns the parent loop over cfg.
func New(cfg Config) *Loop {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC() }
	}
	if cfg.SweepDecide == nil {
		cfg.SweepDecide = hpo.Decide
	}
	if cfg.PipelineDecide == nil {
		cfg.PipelineDecide = pipeline.Decide
	}
	return &Loop{cfg: cfg, kick: tick.NewKick()}
}

// Kick wakes the loop.
func (l *Loop) Kick() { l.kick.Kick() }

// Run drives every active sweep and pipeline (Pass) until ctx ends: every second and on any
// run change (a child ended, a parent was created or canceled).
func (l *Loop) Run(ctx context.Context) {
	l.cfg.Runs.OnChange(func(string) { l.Kick() })
	tick.Loop(ctx, period, l.kick, func(ctx context.Context) {
		if err := l.Pass(ctx); err != nil && ctx.Err() == nil {
			l.cfg.Log.Error("parent pass", "err", err)
		}
	})
}

// Pass is one pass of the parent loop: sweeps and pipelines are both parents whose children
// are runs the loop creates from what the store says, so one loop, one wake-up and one period
// drive both.
func (l *Loop) Pass(ctx context.Context) error {
	return errors.Join(l.SweepPass(ctx), l.PipelinePass(ctx))
}

// SweepPass is one pass over the active sweeps: each reads its trials from the store, asks the
// sweep engine what to do and does it.
func (l *Loop) SweepPass(ctx context.Context) error {
	return l.passOver(ctx, "sweep", l.cfg.Store.ActiveSweeps, l.driveSweep)
}

// PipelinePass is one pass over the active pipelines: each reads its steps from the store,
// asks the planner what to do and does it.
func (l *Loop) PipelinePass(ctx context.Context) error {
	return l.passOver(ctx, "pipeline", l.cfg.Store.ActivePipelines, func(ctx context.Context, p *job.Run) error {
		return l.drivePipeline(ctx, p.ID)
	})
}

// passOver drives each active parent of one kind (listed by active) with drive; one parent's
// error is logged and does not stop the others.
func (l *Loop) passOver(ctx context.Context, kind string, active func(context.Context) ([]*job.Run, error), drive func(context.Context, *job.Run) error) error {
	parents, err := active(ctx)
	if err != nil {
		return err
	}
	for _, p := range parents {
		if err := drive(ctx, p); err != nil && ctx.Err() == nil {
			l.cfg.Log.Error(kind, "run", p.ID, "err", err)
		}
	}
	return nil
}
