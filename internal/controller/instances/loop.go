package instances

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tick"
)

// Options tune the instance loop.
type Options struct {
	// Every is how often instances are looked at; 0 means 5 s.
	Every time.Duration
	// Minute is how long a minute of idle_time_before_shutdown_minutes lasts: a documented test
	// knob (HANGAR_TEST_INSTANCE_MINUTE, docs/instances.md); 0 means a minute.
	Minute time.Duration
	// CPUThreshold is the CPU use (percent) above which an instance is busy; 0 means the default.
	CPUThreshold float64
}

// Run moves compute instances through their lives until ctx ends: nodes coming and
// going, setup scripts, schedules and idle shutdown (instance.Decide).
func (m *Manager) Run(ctx context.Context, o Options) {
	if o.Every <= 0 {
		o.Every = 5 * time.Second
	}
	tick.Loop(ctx, o.Every, nil, func(ctx context.Context) {
		if err := m.Pass(ctx, o); err != nil && ctx.Err() == nil {
			m.log.Error("instances", "err", err)
		}
	})
}

// Pass looks at every instance once.
func (m *Manager) Pass(ctx context.Context, o Options) error {
	rows, err := m.store.Instances.List(ctx)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if err := m.instancePass(ctx, row.Name, o); err != nil && ctx.Err() == nil {
			m.log.Error("instance", "name", row.Name, "err", err)
		}
	}
	return nil
}

// instanceFacts is what a pass reads about an instance before deciding.
type instanceFacts struct {
	spec   *compute.InstanceSpec
	nodes  []*store.Node
	jobs   []string // active runs' ids
	script *job.Run // the setup script run of this start, if any
}

// instancePass decides on one instance from a copy of its row, with the side effects (a setup
// script's run) done outside any transaction, then writes the row unless the user moved it
// meanwhile (that pass's work is then undone and done again from the new row).
func (m *Manager) instancePass(ctx context.Context, name string, o Options) error {
	f, err := m.instanceFacts(ctx, name)
	if err != nil {
		return err
	}
	row, err := m.store.Instances.Get(ctx, name)
	if err != nil {
		return err
	}
	before := row
	m.lifecycle(ctx, &row, f)
	m.judge(&row, f, o)
	row.UpdatedAt = m.now()
	stale := false
	_, err = m.store.Instances.Update(ctx, name, func(in *store.Instance) (bool, error) {
		if !in.UpdatedAt.Equal(before.UpdatedAt) || in.State != before.State {
			stale = true
			return false, nil
		}
		signals := in.Signals // the agent's report may have come since
		*in = row
		in.Signals = signals
		return true, nil
	})
	if stale && row.ScriptRun != before.ScriptRun && row.ScriptRun != "" {
		_, _ = m.runs.Cancel(ctx, row.ScriptRun)
	}
	if err == nil && !stale && (before.State != row.State || before.ScriptRun != row.ScriptRun) {
		m.log.Info("compute instance", "name", name, "state", row.State, "reason", row.Reason)
		m.runs.Kick()
	}
	return err
}

func (m *Manager) instanceFacts(ctx context.Context, name string) (instanceFacts, error) {
	var f instanceFacts
	_, spec, err := m.instanceSpec(ctx, name)
	if err != nil {
		return f, err
	}
	f.spec = spec
	if f.nodes, err = m.store.Cluster.Nodes(ctx, store.NodeFilter{Pool: name}); err != nil {
		return f, err
	}
	active, err := m.store.Runs.List(ctx, store.RunFilter{Active: true, Compute: name})
	if err != nil {
		return f, err
	}
	for _, r := range active {
		f.jobs = append(f.jobs, r.ID)
	}
	return f, nil
}

// ready says whether the instance's node has joined and takes work.
func (f instanceFacts) ready() (string, bool) {
	for _, n := range f.nodes {
		if n.State == compute.NodeIdle || n.State == compute.NodeRunning {
			return n.ID, true
		}
	}
	return "", false
}

// lifecycle moves the row on from what the node and the setup scripts did.
func (m *Manager) lifecycle(ctx context.Context, in *store.Instance, f instanceFacts) {
	switch instance.State(in.State) {
	case instance.Stopping:
		if len(f.nodes) > 0 {
			return
		}
		if in.Pending == "start" {
			m.setInstanceState(in, instance.Starting, "restarted by the user")
			return
		}
		reason := in.Reason
		m.setInstanceState(in, instance.Stopped, reason)
	case instance.Starting:
		node, ok := f.ready()
		if !ok {
			return
		}
		m.setupScripts(ctx, in, f, node)
	case instance.Running:
		if len(f.nodes) == 0 {
			m.setInstanceState(in, instance.Starting, "its node went away; a new one is starting")
		}
	}
}

// setupScripts runs the creation script (once, on the first start) and the startup script
// (every start) on a started instance's node, one after the other, as runs on the instance;
// a failing script fails the instance, naming the script and its exit code.
func (m *Manager) setupScripts(ctx context.Context, in *store.Instance, f instanceFacts, node string) {
	if in.ScriptRun != "" {
		r, err := m.store.Runs.Run(ctx, in.ScriptRun)
		if err != nil {
			return // read again next pass
		}
		if !r.Status.Terminal() {
			return
		}
		if r.Status != job.Completed {
			exit := "no exit code"
			if r.ExitCode != nil {
				exit = fmt.Sprintf("exit code %d", *r.ExitCode)
			}
			m.setInstanceState(in, instance.Failed, fmt.Sprintf("%s %s %s (%s): its log is in hangar compute logs %s",
				in.ScriptKind, strings.ToLower(string(r.Status)), exit, r.ID, in.Name))
			return
		}
		if in.ScriptKind == "creation_script" {
			in.Created = true
		}
	}
	next, script := nextScript(in, f.spec)
	if script == nil {
		m.setInstanceState(in, instance.Running, fmt.Sprintf("node %s ready (%s)", node, in.Reason))
		in.ActiveAt = m.now()
		return
	}
	r, err := m.runs.Queue(ctx, scriptJob(in, f.spec, next, script, m.now()))
	if err != nil {
		m.setInstanceState(in, instance.Failed, fmt.Sprintf("%s could not start: %v", next, err))
		return
	}
	in.ScriptRun, in.ScriptKind = r.ID, next
}

// nextScript is the setup script to run after the one this start ran last.
func nextScript(in *store.Instance, spec *compute.InstanceSpec) (string, *compute.SetupScript) {
	ss := spec.SetupScripts
	if ss == nil {
		return "", nil
	}
	if ss.CreationScript != nil && !in.Created && in.ScriptKind == "" {
		return "creation_script", ss.CreationScript
	}
	if ss.StartupScript != nil && in.ScriptKind != "startup_script" {
		return "startup_script", ss.StartupScript
	}
	return "", nil
}

// defaultScriptTimeout bounds a setup script that names no timeout.
const defaultScriptTimeout = 30 * time.Minute

// scriptJob is the run of a setup script on the instance: the script's text travels in an
// environment variable, base64-encoded so that nothing in it is bound (a ${{secrets.x}} in a
// compute operator's script would otherwise get the secret's value), and its arguments are
// quoted one by one, so nothing the user wrote is read by the shell except the script itself.
func scriptJob(in *store.Instance, spec *compute.InstanceSpec, kind string, s *compute.SetupScript, now time.Time) job.Spec {
	cmd := `printf '%s' "$HANGAR_SETUP_SCRIPT" | base64 -d > setup-script.sh && exec bash setup-script.sh`
	for _, a := range s.Args {
		cmd += " " + shellQuote(a)
	}
	timeout := defaultScriptTimeout
	if s.TimeoutMinutes > 0 {
		timeout = time.Duration(s.TimeoutMinutes) * time.Minute
	}
	short := strings.TrimSuffix(kind, "_script")
	return job.Spec{Type: "command", Name: fmt.Sprintf("%s-%s-%d-%d", in.Name, short, in.Starts, now.Unix()),
		DisplayName: fmt.Sprintf("%s %s", in.Name, kind), ExperimentName: "instance-" + in.Name, Compute: in.Name,
		Command:              cmd,
		EnvironmentVariables: map[string]string{"HANGAR_SETUP_SCRIPT": base64.StdEncoding.EncodeToString([]byte(s.Content))},
		Limits:               job.Limits{TimeoutSeconds: int64(timeout / time.Second)},
		Meta: asset.Meta{
			Properties: map[string]string{"created_by": spec.Owner, PropInstance: in.Name, PropInstanceScript: kind},
		},
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// judge asks instance.Decide about the instance's use and schedules, and applies its decision.
func (m *Manager) judge(in *store.Instance, f instanceFacts, o Options) {
	var sig signalsRecord
	_ = json.Unmarshal([]byte(in.Signals), &sig)
	var deferred instance.Deferred
	if in.DeferredStop != "" {
		_ = json.Unmarshal([]byte(in.DeferredStop), &deferred) // unreadable: nothing deferred
	}
	d := instance.Decide(instance.Input{
		Now: m.now(), State: instance.State(in.State), ActiveAt: in.ActiveAt, CheckedTo: in.CheckedTo,
		Signals: instance.Signals{Jobs: f.jobs, ReportedAt: sig.ReportedAt, SSHSessions: sig.SSHSessions,
			JupyterKernels: sig.JupyterKernels, CPUPercent: sig.CPUPercent, GPUPercent: sig.GPUPercent, HasGPU: sig.HasGPU},
		Settings:  instance.Settings{IdleMinutes: f.spec.IdleTimeBeforeShutdownMinutes, Minute: o.Minute, CPUThreshold: o.CPUThreshold},
		Schedules: schedulesOf(f.spec), Deferred: deferred,
	})
	in.ActiveAt, in.CheckedTo, in.Idle = d.ActiveAt, d.CheckedTo, d.Idle
	in.DeferredStop = ""
	if !d.Deferred.IsZero() {
		b, _ := json.Marshal(d.Deferred)
		in.DeferredStop = string(b)
	}
	switch d.Action {
	case instance.Stop:
		m.setInstanceState(in, instance.Stopping, d.Reason)
	case instance.Start:
		m.setInstanceState(in, instance.Starting, d.Reason)
	default:
		if d.Reason != "" {
			in.Idle += "; " + d.Reason
		}
	}
}
