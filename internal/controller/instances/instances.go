package instances

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
	"github.com/hangar-ml/hangar/internal/store"
)

// Compute instances (design 0018): an instance is a target of type instance whose node the
// cluster backend keeps as a one-node pool (Backend{Kind: instance, Pools: the Manager}).
// Its row in the store (store.Instance) is its life: the state asked for and why. This file holds
// the user's verbs and what the backend asks; loop.go moves the states on.

// Properties a setup script's run carries, naming its instance and which script it is.
const (
	PropInstance       = "hangar.instance"
	PropInstanceScript = "hangar.instance_script"
)

// signalsRecord is an instance's last activity report, as stored.
type signalsRecord struct {
	api.NodeActivity
	ReportedAt time.Time `json:"reported_at"`
	// Node is the node that sent it (a Jupyter report is its node's).
	Node string `json:"node,omitempty"`
	// JupyterToken is the Jupyter report's token sealed with the workspace key: the report is
	// stored without it (the database and its backups never hold it in clear).
	JupyterToken string `json:"jupyter_token_sealed,omitempty"`
}

// instanceSpec reads an instance target's spec.
func (m *Manager) instanceSpec(ctx context.Context, name string) (*compute.Target, *compute.InstanceSpec, error) {
	t, err := m.store.Cluster.Compute(ctx, name)
	if err != nil {
		return nil, nil, mapStoreErr(err)
	}
	if t.Type != compute.TypeInstance {
		return nil, nil, invalidf("compute %s is a %s target, not a compute instance", name, t.Type)
	}
	st, err := compute.Load(*t)
	if err != nil || st.Spec.Instance == nil {
		return nil, nil, fmt.Errorf("read compute instance %s: %v", name, err)
	}
	return t, st.Spec.Instance, nil
}

// PoolSpec is an instance as the cluster backend's pool: one node while it is wanted
// (Starting, Running), none otherwise; its node never released for idleness by the autoscaler
// (the instance's own idle judgement stops it).
func (m *Manager) PoolSpec(ctx context.Context, t compute.Target) (compute.Spec, error) {
	st, err := compute.Load(t)
	if err != nil || st.Spec.Instance == nil {
		return compute.Spec{}, fmt.Errorf("compute %s is not an instance: %v", t.Name, err)
	}
	row, err := m.store.Instances.Get(ctx, t.Name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return compute.Spec{}, err
	}
	n := 0
	if instance.State(row.State).Wants() {
		n = 1
	}
	in := st.Spec.Instance
	spec := st.Spec
	spec.Cluster = &compute.ClusterSpec{Size: in.Size, Tier: compute.TierDedicated, MinInstances: n, MaxInstances: n,
		IdleTimeBeforeScaleDown: 1 << 30, Provider: in.Provider, MaxProvisionRetries: compute.DefaultMaxProvisionRetries,
		ProvisionTimeout: compute.DefaultProvisionTimeout}
	return spec, nil
}

// Admit refuses a job on an instance that is not started: a stopped instance does not
// start for a job by itself (its owner starts it), and a job queued behind a stop would wait
// for a start nobody asked for.
func (m *Manager) Admit(ctx context.Context, t compute.Target) error {
	row, err := m.store.Instances.Get(ctx, t.Name)
	if err != nil {
		return fmt.Errorf("compute instance %s: %v", t.Name, err)
	}
	if instance.State(row.State).Wants() {
		return nil
	}
	return fmt.Errorf("compute instance %s is %s (%s); start it with hangar compute start %s",
		t.Name, row.State, row.Reason, t.Name)
}

// Activity records a node's activity report when the node is an instance's.
func (m *Manager) Activity(ctx context.Context, n *store.Node, a api.NodeActivity) {
	rec := signalsRecord{NodeActivity: a, ReportedAt: m.now(), Node: n.ID}
	if j := a.Jupyter; j != nil && j.Token != "" {
		shown := *j
		shown.Token = ""
		rec.Jupyter = &shown
		sealed, err := m.sealJupyterToken(j.Token)
		if err != nil { // the activity still counts; Jupyter cannot be opened through the server
			m.log.Warn("record instance activity: seal the Jupyter token", "node", n.ID, "err", err)
		}
		rec.JupyterToken = sealed
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return
	}
	_, err = m.store.Instances.Update(ctx, n.Pool, func(in *store.Instance) (bool, error) {
		if in.State == "" {
			return false, nil // a cluster's node
		}
		in.Signals = string(data)
		return true, nil
	})
	if err != nil {
		m.log.Warn("record instance activity", "node", n.ID, "err", err)
	}
}

// Action starts, stops or restarts an instance for its user. A stop with active jobs is
// refused unless force, which cancels them: a development machine's jobs are its owner's, who
// says whether they may go.
func (m *Manager) Action(ctx context.Context, name, action string, force bool) (*api.Instance, error) {
	if _, _, err := m.instanceSpec(ctx, name); err != nil {
		return nil, err
	}
	if action == "stop" || action == "restart" {
		if err := m.stopJobs(ctx, name, force); err != nil {
			return nil, err
		}
	}
	var refused error
	_, err := m.store.Instances.Update(ctx, name, func(in *store.Instance) (bool, error) {
		state := instance.State(in.State)
		switch {
		case action == "start" && state.Wants():
			refused = conflictf("compute instance %s is already %s (%s)", name, state, in.Reason)
		case action == "start":
			m.setInstanceState(in, instance.Starting, "started by the user")
		case action == "stop" && !state.Wants():
			refused = conflictf("compute instance %s is already %s (%s)", name, state, in.Reason)
		case action == "stop":
			m.setInstanceState(in, instance.Stopping, "stopped by the user")
		case action == "restart" && state == instance.Stopped:
			m.setInstanceState(in, instance.Starting, "restarted by the user")
		case action == "restart":
			m.setInstanceState(in, instance.Stopping, "restarting: stopped by the user, starts again once stopped")
			in.Pending = "start"
		default:
			refused = invalidf("unknown instance action %q (start, stop or restart)", action)
		}
		return refused == nil, nil
	})
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, refused
	}
	m.log.Info("compute instance "+action, "name", name)
	m.runs.Kick()
	return m.Instance(ctx, name)
}

// setInstanceState moves an instance's row to a state, with the reason.
func (m *Manager) setInstanceState(in *store.Instance, to instance.State, reason string) {
	now := m.now()
	if to == instance.Starting && instance.State(in.State) != instance.Starting {
		in.Starts++
		in.ScriptRun, in.ScriptKind, in.ActiveAt = "", "", now
	}
	in.State, in.Reason, in.Since, in.UpdatedAt, in.Pending = string(to), reason, now, now, ""
}

// stopJobs refuses a stop while the instance runs jobs (its setup scripts aside), or with force
// cancels them.
func (m *Manager) stopJobs(ctx context.Context, name string, force bool) error {
	active, err := m.store.Runs.List(ctx, store.RunFilter{Active: true, Compute: name})
	if err != nil {
		return err
	}
	for _, r := range active {
		if r.Spec.Properties[PropInstanceScript] != "" {
			if _, err := m.runs.Cancel(ctx, r.ID); err != nil && !isConflict(err) {
				return err
			}
			continue
		}
		if !force {
			return conflictf("compute instance %s runs job %s; cancel it, or stop with --force to cancel its jobs", name, r.ID)
		}
		if _, err := m.runs.Cancel(ctx, r.ID); err != nil && !isConflict(err) {
			return fmt.Errorf("cancel %s: %w", r.ID, err)
		}
	}
	return nil
}

// Instance is an instance's life as compute show prints it.
func (m *Manager) Instance(ctx context.Context, name string) (*api.Instance, error) {
	v, err := m.readInstance(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &api.Instance{Name: name, State: v.row.State, Reason: v.row.Reason, Since: v.row.Since, Owner: v.spec.Owner,
		Idle: v.row.Idle, IdleShutdownMinutes: v.spec.IdleTimeBeforeShutdownMinutes, Node: v.node, NodeState: v.nodeState}
	out.Scripts, err = m.instanceScripts(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, s := range schedulesOf(v.spec) {
		out.Schedules = append(out.Schedules, s.Name)
	}
	out.SSH, out.SSHHostKey = instanceSSH(name, v.spec, v.state, v.node, v.sig, m.now())
	out.Jupyter, out.JupyterPath = jupyterStatus(name, v.state, v.node, v.sig, m.now())
	return out, nil
}

// shownInstance is what show and the Jupyter and SSH lookups read of an instance: its spec, its
// row and state, its node ("" for none) and that node's state, and what its agent last
// reported of the services it runs.
type shownInstance struct {
	spec      *compute.InstanceSpec
	row       store.Instance
	state     instance.State
	node      string
	nodeState string
	sig       signalsRecord
}

// readInstance reads an instance as shown.
func (m *Manager) readInstance(ctx context.Context, name string) (*shownInstance, error) {
	_, spec, err := m.instanceSpec(ctx, name)
	if err != nil {
		return nil, err
	}
	row, err := m.store.Instances.Get(ctx, name)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	v := &shownInstance{spec: spec, row: row, state: instance.State(row.State), sig: readSignals(row.Signals)}
	nodes, err := m.store.Cluster.Nodes(ctx, store.NodeFilter{Pool: name})
	if err != nil {
		return nil, err
	}
	if len(nodes) > 0 {
		v.node, v.nodeState = nodes[0].ID, string(nodes[0].State)
	}
	return v, nil
}

// instanceScripts lists the setup scripts' runs on the instance, oldest first.
func (m *Manager) instanceScripts(ctx context.Context, name string) ([]api.InstanceScript, error) {
	runs, err := m.store.Runs.List(ctx, store.RunFilter{Compute: name})
	if err != nil {
		return nil, err
	}
	var out []api.InstanceScript
	for _, r := range runs {
		if kind := r.Spec.Properties[PropInstanceScript]; kind != "" {
			out = append(out, api.InstanceScript{Kind: kind, Run: r.ID, Status: string(r.Status), ExitCode: r.ExitCode})
		}
	}
	slices.Reverse(out) // runs come newest first
	return out, nil
}

// schedulesOf is an instance's enabled schedules, parsed (the decoder checked them).
func schedulesOf(spec *compute.InstanceSpec) []instance.Schedule {
	if spec.Schedules == nil {
		return nil
	}
	var out []instance.Schedule
	for _, s := range spec.Schedules.ComputeStartStop {
		if s.State == "disabled" {
			continue
		}
		if sc, err := instance.NewSchedule(instance.Action(s.Action), s.Cron, s.Trigger.TimeZone); err == nil {
			out = append(out, sc)
		}
	}
	return out
}
