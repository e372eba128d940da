package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// Serverless compute (design 0017): the workspace's serverless pool (a `type: serverless`
// target named serverless) says where capacity comes from, which sizes jobs may ask for and
// the quota. A job on serverless compute runs on the pool's cluster of its size,
// serverless_<size>: a managed cluster with min_instances 0 that Hangar creates on first use,
// so the cluster backend's scheduler and autoscaler create its nodes on demand and release
// them when idle. The pool's quota is a quota group shared by those clusters. Until an owner
// configures a pool, the workspace has one all the same: this machine's capacity, through
// the local provider's agents (compute.MachinePool), never stored.

// resolveJobCompute finds the target of a job (or a pipeline step): as resolveCompute, except
// that serverless, or no compute in a workspace with a serverless pool and no default_compute
// setting, is the pool's cluster of the job's size.
func (w *Workspace) ResolveJobCompute(ctx context.Context, sp *job.Spec) (*compute.Target, error) {
	name := sp.Compute
	if name == "" {
		var err error
		if name, err = w.defaultJobCompute(ctx); err != nil {
			return nil, err
		}
	}
	if !strings.EqualFold(name, compute.ServerlessName) {
		return w.ResolveCompute(ctx, name)
	}
	if _, ok := w.Backends[compute.TypeCluster]; !ok {
		return nil, Invalidf("compute: serverless compute runs on managed clusters, which this server does not run; name a compute target: %s",
			strings.Join(w.computeNames(ctx), ", "))
	}
	pool, err := w.serverlessPool(ctx, sp.Resources.InstanceType)
	if err != nil {
		return nil, err
	}
	want, err := serverlessCluster(*pool, sp.Resources)
	if err != nil {
		return nil, Invalidf("%v", err)
	}
	return w.ensureServerlessCluster(ctx, want)
}

// defaultJobCompute is where a job that names no compute runs: the default_compute setting,
// else the serverless pool when an owner configured one, else "" (the local target: this
// machine, as the unconfigured pool is).
func (w *Workspace) defaultJobCompute(ctx context.Context) (string, error) {
	def, ok, err := w.Store.Settings.Setting(ctx, SettingDefaultCompute)
	if err != nil || (ok && def != "") {
		return def, err
	}
	_, err = w.Store.Cluster.Compute(ctx, compute.ServerlessName)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", nil
	case err != nil:
		return "", err
	}
	return compute.ServerlessName, nil
}

// serverlessPool reads the workspace's serverless pool: the configured one, else this
// machine's (machinePool) with the size a job asks for.
func (w *Workspace) serverlessPool(ctx context.Context, size string) (*compute.Spec, error) {
	t, err := w.Store.Cluster.Compute(ctx, compute.ServerlessName)
	if errors.Is(err, store.ErrNotFound) {
		return w.machinePool(ctx, size)
	} else if err != nil {
		return nil, err
	}
	st, err := compute.Load(*t)
	if err != nil {
		return nil, err
	}
	if st.Spec.Serverless == nil {
		return nil, Invalidf("compute: the serverless pool's definition is unreadable; create it again with hangar compute update -f serverless.yml")
	}
	return &st.Spec, nil
}

// machinePool is the pool of a workspace without a configured one (compute.MachinePool),
// offering besides its local-* sizes the size a job names when the size catalog has it (checked
// and spelled as the cluster backend does), so that a file written for Azure's serverless
// compute (instance_type: Standard_E4s_v3) runs here unchanged.
func (w *Workspace) machinePool(ctx context.Context, size string) (*compute.Spec, error) {
	pool := compute.MachinePool()
	sl := pool.Serverless
	if _, offered := sl.Size(size); size == "" || offered {
		return &pool, nil
	}
	attach, ok := w.Backends[compute.TypeCluster].(backend.Attacher)
	if !ok {
		return nil, Invalidf("compute: serverless compute needs managed clusters, which this server does not run")
	}
	cl := compute.Spec{Name: compute.ServerlessClusterPrefix + size, Type: compute.TypeCluster,
		Cluster: &compute.ClusterSpec{Size: size, Provider: sl.Provider}}
	if _, err := attach.Attach(ctx, &cl); err != nil {
		return nil, Invalidf("resources.instance_type: %v", err)
	}
	sl.Sizes = append(sl.Sizes, compute.ServerlessSize{Name: cl.Cluster.Size})
	return &pool, nil
}

// serverlessTarget is the pool as a target (what a pipeline that runs its steps on serverless
// shows as its compute): the stored pool, else this machine's.
func (w *Workspace) serverlessTarget(ctx context.Context) (*compute.Target, error) {
	t, err := w.Store.Cluster.Compute(ctx, compute.ServerlessName)
	if !errors.Is(err, store.ErrNotFound) {
		return t, err
	}
	return MachinePoolTarget()
}

// MachinePoolTarget is this machine's serverless pool as a target, for the views of a workspace
// whose owner configured none (compute list and show).
func MachinePoolTarget() (*compute.Target, error) {
	pool := compute.MachinePool()
	props, err := json.Marshal(compute.Stored{Spec: pool})
	if err != nil {
		return nil, err
	}
	return &compute.Target{Name: pool.Name, Type: pool.Type, Description: pool.Description, Properties: props}, nil
}

func (w *Workspace) computeNames(ctx context.Context) []string {
	known, _ := w.Store.Cluster.Computes(ctx)
	var names []string
	for _, k := range known {
		names = append(names, k.Name)
	}
	return names
}

// serverlessCluster is the cluster of the pool that runs a job asking for res: the size it
// names (resources.instance_type, or the pool's default size), min_instances 0, nodes from the
// pool's provider, released after the pool's idle time, counted against the pool's quota. It
// refuses a size the pool does not offer and more instances than the quota allows.
func serverlessCluster(pool compute.Spec, res job.Resources) (compute.Spec, error) {
	sl := pool.Serverless
	name := res.InstanceType
	if name == "" {
		name = sl.DefaultSize
	}
	size, ok := sl.Size(name)
	if !ok {
		return compute.Spec{}, fmt.Errorf("resources.instance_type: size %s is not offered by the serverless pool (offered: %s)",
			name, strings.Join(sl.SizeNames(), ", "))
	}
	limit := sl.MaxInstances
	if size.MaxInstances > 0 {
		limit = min(limit, size.MaxInstances)
	}
	if n := max(res.InstanceCount, 1); n > limit {
		return compute.Spec{}, fmt.Errorf("resources.instance_count: the job asks for %d instances, the serverless pool allows %d of size %s (max_instances)",
			n, limit, size.Name)
	}
	return compute.Spec{
		Name: compute.ServerlessClusterPrefix + size.Name, Type: compute.TypeCluster,
		Description: "serverless pool's nodes of size " + size.Name + " (created by Hangar; follows compute serverless)",
		Cluster: &compute.ClusterSpec{
			Size: size.Name, Tier: compute.TierDedicated, MinInstances: 0, MaxInstances: limit,
			IdleTimeBeforeScaleDown: sl.IdleTimeBeforeScaleDown, EnableNodePublicIP: true,
			Provider: sl.Provider, MaxProvisionRetries: sl.MaxProvisionRetries,
			ProvisionTimeout: sl.ProvisionTimeout, JoinTimeout: sl.JoinTimeout,
			QuotaGroup: compute.ServerlessName, QuotaGroupInstances: sl.MaxInstances, Isolated: size.Isolated,
		},
	}, nil
}

// ensureServerlessCluster returns the pool's cluster as want describes it: stored as it is, or
// created (checked by the cluster backend) or brought up to date with the pool.
func (w *Workspace) ensureServerlessCluster(ctx context.Context, want compute.Spec) (*compute.Target, error) {
	t, err := w.Store.Cluster.Compute(ctx, want.Name)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	case exists:
		st, err := compute.Load(*t)
		if err == nil && st.Spec.Cluster != nil && reflect.DeepEqual(*st.Spec.Cluster, *want.Cluster) {
			return t, nil
		}
	}
	made, err := w.Computes.Create(ctx, want, exists)
	var e *Error
	if errors.As(err, &e) && e.Kind == Conflict { // another job created it meanwhile
		return w.Store.Cluster.Compute(ctx, want.Name)
	} else if err != nil {
		return nil, err
	}
	w.Log.Info("serverless cluster stored", "cluster", want.Name, "max_instances", want.Cluster.MaxInstances)
	return made, nil
}

// putServerlessPool stores the serverless pool (CreateCompute for type serverless): each size
// is checked as its cluster would be (against the size catalog), and the pool's clusters that
// exist take the new settings. A cluster of a size no longer offered is left to finish its
// runs and go idle; hangar compute delete removes it.
func (cp *Computes) putServerlessPool(ctx context.Context, s compute.Spec, old *compute.Target) (*compute.Target, error) {
	if s.Name != compute.ServerlessName || s.Serverless == nil {
		return nil, Invalidf("name: the serverless pool is named serverless")
	}
	attach, ok := cp.ws.Backends[compute.TypeCluster].(backend.Attacher)
	if !ok {
		return nil, Invalidf("type: serverless needs managed clusters, which this server does not run")
	}
	for i, z := range s.Serverless.Sizes {
		cl := compute.Spec{Name: compute.ServerlessClusterPrefix + z.Name, Type: compute.TypeCluster,
			Cluster: &compute.ClusterSpec{Size: z.Name, Provider: s.Serverless.Provider}}
		if _, err := attach.Attach(ctx, &cl); err != nil {
			return nil, Invalidf("sizes[%d]: %v", i, err)
		}
		if strings.EqualFold(s.Serverless.DefaultSize, z.Name) {
			s.Serverless.DefaultSize = cl.Cluster.Size
		}
		s.Serverless.Sizes[i].Name = cl.Cluster.Size // the catalog's spelling
	}
	t, err := cp.put(ctx, compute.Stored{Spec: s}, old)
	if err != nil {
		return nil, err
	}
	cp.ws.Log.Info("serverless pool stored", "sizes", s.Serverless.SizeNames(), "max_instances", s.Serverless.MaxInstances)
	return t, cp.syncServerlessClusters(ctx, s)
}

// syncServerlessClusters brings the pool's existing clusters up to date with it.
func (cp *Computes) syncServerlessClusters(ctx context.Context, pool compute.Spec) error {
	ts, err := cp.ws.Store.Cluster.Computes(ctx)
	if err != nil {
		return err
	}
	for _, t := range ts {
		size := compute.ServerlessSizeOf(t.Name)
		if size == "" || t.Type != compute.TypeCluster || !slices.ContainsFunc(pool.Serverless.SizeNames(), func(n string) bool { return n == size }) {
			continue
		}
		want, err := serverlessCluster(pool, job.Resources{InstanceType: size})
		if err != nil {
			return err
		}
		if _, err := cp.ws.ensureServerlessCluster(ctx, want); err != nil {
			return err
		}
	}
	cp.ws.Runs.Kick()
	return nil
}

// ServerlessUse says what the serverless pool created for a run, or nil when the run is not on
// one of the pool's clusters.
func ServerlessUse(r *job.Run) *api.ServerlessUse {
	size := compute.ServerlessSizeOf(r.Compute)
	if size == "" {
		return nil
	}
	u := &api.ServerlessUse{Pool: compute.ServerlessName, Size: size, Cluster: r.Compute,
		Instances: max(r.Spec.Resources.InstanceCount, 1)}
	if r.Placement != nil {
		u.Nodes = slices.Clone(r.Placement.Nodes)
	}
	return u
}
