package controller

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// servingTick is the serving loop's period (also woken by ServingChanged).
const servingTick = time.Second

// failedBeforeReady is how many replicas in a row may fail before their deployment is Failed
// (it keeps trying, with backoff).
const failedBeforeReady = 3

// ServingState is what the router needs: every endpoint with its keys (unsealed, in memory only)
// and its deployments with their ready replicas.
type ServingState struct {
	Endpoints []EndpointState
}

// EndpointState is one endpoint as the router sees it.
type EndpointState struct {
	Spec        serving.Endpoint
	Keys        []string // key auth: the keys that open it
	Deployments []DeploymentState
}

// DeploymentState is one deployment as the router sees it.
type DeploymentState struct {
	Spec     serving.Deployment
	Replicas []ReadyReplica
}

// ReadyReplica is a replica that answers at Address to requests carrying Secret.
type ReadyReplica struct {
	RunID, Address, Secret string
}

// Serving is the serving loop's wiring: Load tells the autoscaler a deployment's load (the
// router's samples); Publish receives the state after every pass.
type Serving struct {
	Load    func(serving.Key, time.Time) ([]serving.LoadSample, time.Time)
	Publish func(ServingState)
}

// servingMemo is what the serving loop keeps between passes (in memory: after a restart the
// backoff starts over).
type servingMemo struct {
	mu       sync.Mutex
	failures map[serving.Key]failureStreak
	kick     chan struct{}
	// replicas are the replicas' run ids as of the last pass.
	replicas map[string]bool
	// draining are the replicas the plan stops, out of the router's table, and when they may be
	// told to stop (their requests in flight have had their request_timeout_ms).
	draining map[string]time.Time
}

type failureStreak struct {
	n      int
	last   time.Time
	reason string
	run    string
}

// ServingChanged wakes the serving loop (an endpoint, a deployment or a replica changed).
func (c *Controller) ServingChanged() {
	c.serving.mu.Lock()
	if c.serving.kick == nil {
		c.serving.kick = make(chan struct{}, 1)
	}
	k := c.serving.kick
	c.serving.mu.Unlock()
	select {
	case k <- struct{}{}:
	default:
	}
}

// RunServing keeps every deployment's replicas as its plan says, until ctx ends.
func (c *Controller) RunServing(ctx context.Context, s Serving) {
	c.ServingChanged() // makes the kick channel
	c.OnChange(c.replicaChanged)
	t := time.NewTicker(servingTick)
	defer t.Stop()
	for {
		if err := c.ServingPass(ctx, s); err != nil && ctx.Err() == nil {
			c.Log.Error("serving pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.serving.kick:
		}
	}
}

// ServingPass is one pass of the serving loop: it reads the deployments and their replicas,
// asks serving.PlanReplicas what to do, does it, and publishes what the router needs.
func (c *Controller) ServingPass(ctx context.Context, s Serving) error {
	now := c.Now()
	deps, err := c.Store.Deployments(ctx, "")
	if err != nil {
		return err
	}
	reps, err := c.Store.Replicas(ctx)
	if err != nil {
		return err
	}
	runs := map[string]*job.Run{}
	views := make([]serving.ReplicaView, 0, len(reps))
	for _, r := range reps {
		run, err := c.Store.Run(ctx, r.RunID)
		if errors.Is(err, store.ErrNotFound) {
			run = &job.Run{ID: r.RunID, Status: job.Canceled, StatusReason: "its run was deleted"}
		} else if err != nil {
			return err
		}
		runs[r.RunID] = run
		views = append(views, serving.ReplicaView{RunID: r.RunID, Key: serving.Key{Endpoint: r.Endpoint, Deployment: r.Deployment},
			Generation: r.Generation, Created: r.CreatedAt, Ended: run.Status.Terminal(),
			Ready:    r.Address != "" && run.Status == job.Running,
			Stopping: run.Status == job.CancelRequested})
	}
	c.noteFailures(views, runs)
	c.rememberReplicas(reps)
	wants := c.wants(deps, views, s, now)
	plan := serving.PlanReplicas(wants, views, now)
	// The router stops sending to a replica about to stop first; it is told to stop once the
	// requests it was sent have had their time (drain).
	stopping := c.drain(plan, deps, reps, now)
	if s.Publish != nil {
		st, err := c.servingState(ctx, deps, reps, runs, stopping)
		if err != nil {
			return err
		}
		s.Publish(st)
	}
	c.applyPlan(ctx, plan, deps, now)
	c.updateStates(ctx, deps, views)
	return nil
}

// rememberReplicas keeps the replicas' run ids, so that a change of one of their runs (it ended,
// its cancel was asked) wakes the serving loop at once (replicaChanged).
func (c *Controller) rememberReplicas(reps []store.Replica) {
	ids := make(map[string]bool, len(reps))
	for _, r := range reps {
		ids[r.RunID] = true
	}
	c.serving.mu.Lock()
	c.serving.replicas = ids
	c.serving.mu.Unlock()
}

// replicaChanged wakes the serving loop when a replica's run changed (an OnChange subscriber).
func (c *Controller) replicaChanged(runID string) {
	c.serving.mu.Lock()
	is := c.serving.replicas[runID]
	c.serving.mu.Unlock()
	if is {
		c.ServingChanged()
	}
}

// noteFailures counts replicas that ended on their own (not stopped by Hangar) per deployment,
// and resets a deployment's count once one of its replicas is ready.
func (c *Controller) noteFailures(views []serving.ReplicaView, runs map[string]*job.Run) {
	c.serving.mu.Lock()
	defer c.serving.mu.Unlock()
	if c.serving.failures == nil {
		c.serving.failures = map[serving.Key]failureStreak{}
	}
	for _, v := range views {
		r := runs[v.RunID]
		switch {
		case v.Ready:
			delete(c.serving.failures, v.Key)
		case v.Ended && r.Status != job.Canceled:
			f := c.serving.failures[v.Key]
			at := c.Now()
			if r.EndedAt != nil {
				at = *r.EndedAt
			}
			c.serving.failures[v.Key] = failureStreak{n: f.n + 1, last: at, run: r.ID,
				reason: fmt.Sprintf("replica %s %s: %s", r.ID, r.Status, r.StatusReason)}
		}
	}
}

// wants asks the autoscaler how many replicas each deployment should have now.
func (c *Controller) wants(deps []store.DeploymentRecord, views []serving.ReplicaView, s Serving, now time.Time) []serving.Want {
	c.serving.mu.Lock()
	defer c.serving.mu.Unlock()
	var out []serving.Want
	for _, d := range deps {
		k := serving.Key{Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name}
		in := serving.ScaleInput{Scale: d.Spec.Scale, Request: d.Spec.Request, InstanceCount: d.Spec.InstanceCount, Now: now}
		for _, v := range views {
			if v.Key == k && !v.Ended && !v.Stopping && v.Generation == d.Generation {
				if v.Ready {
					in.Ready++
				} else {
					in.Starting++
				}
			}
		}
		if s.Load != nil {
			in.Samples, in.LastRequest = s.Load(k, now)
		}
		f := c.serving.failures[k]
		out = append(out, serving.Want{Key: k, Generation: d.Generation, Replicas: serving.DecideScale(in).Replicas,
			Failures: f.n, LastFailure: f.last})
	}
	return out
}

// applyPlan starts and stops replica runs and forgets the ended ones.
func (c *Controller) applyPlan(ctx context.Context, plan serving.ReplicaPlan, deps []store.DeploymentRecord, now time.Time) {
	for _, id := range plan.Forget {
		if err := c.Store.DeleteReplica(ctx, id); err != nil {
			c.Log.Warn("forget replica", "run", id, "err", err)
		}
	}
	for _, st := range plan.Stop {
		if !c.drained(st.RunID, now) {
			continue
		}
		if _, err := c.Cancel(ctx, st.RunID); err != nil {
			c.Log.Warn("stop replica", "run", st.RunID, "err", err)
			continue
		}
		c.Log.Info("replica stopping", "run", st.RunID, "why", st.Reason)
	}
	for _, d := range deps {
		k := serving.Key{Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name}
		for range plan.Start[k] {
			if err := c.startReplica(ctx, d, now); err != nil {
				c.Log.Error("start replica", "deployment", k.String(), "err", err)
				_ = c.Store.SetDeploymentState(ctx, k.Endpoint, k.Deployment, DeploymentFailed, "start a replica: "+err.Error(), "")
				break
			}
		}
	}
}

// startReplica queues a run serving the deployment and records it as a replica.
func (c *Controller) startReplica(ctx context.Context, d store.DeploymentRecord, now time.Time) error {
	sp := serving.ReplicaSpec(d.Spec, d.Spec.Compute, d.Spec.Model.Manifest)
	// Its access to secrets is that of who last created or updated the deployment.
	sp.Properties = StampSubmitter(sp.Properties, d.Spec.Properties[PropSubmitter])
	r, err := c.queue(ctx, sp, nil)
	if err != nil {
		return err
	}
	c.Log.Info("replica started", "endpoint", d.Spec.Endpoint, "deployment", d.Spec.Name, "run", r.ID)
	return c.Store.AddReplica(ctx, store.Replica{RunID: r.ID, Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name,
		Generation: d.Generation, CreatedAt: now})
}

// updateStates moves a deployment to Succeeded once a replica of its generation is ready (or
// it wants none), and to Failed while its replicas keep failing before any is ready.
func (c *Controller) updateStates(ctx context.Context, deps []store.DeploymentRecord, views []serving.ReplicaView) {
	c.serving.mu.Lock()
	failures := c.serving.failures
	c.serving.mu.Unlock()
	for _, d := range deps {
		k := serving.Key{Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name}
		ready := 0
		for _, v := range views {
			if v.Key == k && v.Ready && v.Generation == d.Generation {
				ready++
			}
		}
		state, reason := d.State, d.Reason
		f := failures[k]
		switch {
		case ready > 0 || (d.Spec.Scale.Type == serving.ScaleTargetUtilization && d.Spec.Scale.MinInstances == 0 && f.n == 0):
			state, reason = DeploymentSucceeded, fmt.Sprintf("%d replica(s) ready", ready)
		case f.n >= failedBeforeReady:
			state, reason = DeploymentFailed, fmt.Sprintf("%d replicas failed in a row; the last: %s", f.n, f.reason)
		}
		if state != d.State || reason != d.Reason || (f.run != "" && f.run != d.LastFailed) {
			if err := c.Store.SetDeploymentState(ctx, k.Endpoint, k.Deployment, state, reason, f.run); err != nil {
				c.Log.Warn("deployment state", "deployment", k.String(), "err", err)
			}
		}
	}
}

// servingState is what the router gets: endpoints, their keys, deployments and ready replicas.
func (c *Controller) servingState(ctx context.Context, deps []store.DeploymentRecord, reps []store.Replica, runs map[string]*job.Run,
	stopping map[string]bool) (ServingState, error) {
	eps, err := c.Store.Endpoints(ctx)
	if err != nil {
		return ServingState{}, err
	}
	var st ServingState
	for _, e := range eps {
		es := EndpointState{Spec: e.Spec}
		if e.Spec.AuthMode == serving.AuthKey {
			k, err := c.unsealKeys(e.Keys)
			if err != nil {
				c.Log.Error("endpoint keys", "endpoint", e.Spec.Name, "err", err)
			} else {
				es.Keys = []string{k.Primary, k.Secondary}
			}
		}
		for _, d := range deps {
			if d.Spec.Endpoint != e.Spec.Name {
				continue
			}
			ds := DeploymentState{Spec: d.Spec}
			for _, r := range reps {
				if r.Endpoint == e.Spec.Name && r.Deployment == d.Spec.Name && r.Address != "" && runs[r.RunID].Status == job.Running &&
					!stopping[r.RunID] {
					ds.Replicas = append(ds.Replicas, ReadyReplica{RunID: r.RunID, Address: r.Address,
						Secret: c.replicaSecrets().Secret(r.RunID, runs[r.RunID].Attempt)})
				}
			}
			es.Deployments = append(es.Deployments, ds)
		}
		st.Endpoints = append(st.Endpoints, es)
	}
	return st, nil
}

// ReportServing records where a replica run answers (its supervisor's report).
func (c *Controller) ReportServing(ctx context.Context, runID, address string) error {
	host, port, err := net.SplitHostPort(address)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || host == "" || n < 1 || n > 65535 || len(address) > 300 {
		return invalidf("address: %q is not a host:port", address)
	}
	address = c.reachableAddress(ctx, runID, host, port)
	if err := c.Store.SetReplicaAddress(ctx, runID, address); errors.Is(err, store.ErrNotFound) {
		return notFoundf("run %s is not a replica of a deployment", runID)
	} else if err != nil {
		return err
	}
	c.Log.Info("replica serving", "run", runID, "address", address)
	c.ServingChanged()
	return nil
}

// AuthorizeEndpoint says whether bearer opens endpoint e (one of its keys, or an aml_token minted
// for it and not expired).
func (c *Controller) AuthorizeEndpoint(e EndpointState, bearer string) bool {
	if e.Spec.AuthMode == serving.AuthAMLToken {
		return c.endpointTokens().Verify(bearer, e.Spec.Name, c.Now())
	}
	ok := false
	for _, k := range e.Keys {
		ok = ok || (k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(bearer)) == 1)
	}
	return ok
}

// reachableAddress is where the server reaches a replica that reported host:port. A supervisor
// on an attached VM reaches the server through a reverse tunnel on the VM's loopback, so the
// address it sees is the VM's loopback: the server reaches the replica at the VM's own host.
func (c *Controller) reachableAddress(ctx context.Context, runID, host, port string) string {
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return net.JoinHostPort(host, port)
	}
	if r, err := c.Store.Run(ctx, runID); err == nil {
		if vm := c.sshHost(ctx, r.Compute); vm != "" {
			return net.JoinHostPort(vm, port)
		}
	}
	return net.JoinHostPort(host, port)
}

// sshHost is the host of an attached VM target ("" for any other target, or one not found).
func (c *Controller) sshHost(ctx context.Context, target string) string {
	if t, err := c.Store.Compute(ctx, target); err == nil {
		if st, err := compute.Load(*t); err == nil && st.Spec.SSH != nil {
			return st.Spec.SSH.Host
		}
	}
	return ""
}

func (c *Controller) replicaSecrets() tokens.Replica { return tokens.Replica{Key: c.Tokens.Key} }

// replicaConfig is what a replica run's supervisor gets with its spec (nil for any other run):
// the secret the router's requests carry (one per attempt), and, on an attached VM, which the
// router reaches at its host rather than at the tunnel's loopback its supervisor sees, to
// listen on every address.
func (c *Controller) replicaConfig(ctx context.Context, r *job.Run) *api.ReplicaConfig {
	if r.Spec.Serve == nil {
		return nil
	}
	return &api.ReplicaConfig{Secret: c.replicaSecrets().Secret(r.ID, r.Attempt), AllInterfaces: c.sshHost(ctx, r.Compute) != ""}
}

// drain records the replicas the plan stops (when first seen: they may be stopped once their
// deployment's request_timeout_ms has passed, the longest a request sent to them can last),
// forgets those the plan no longer stops (they serve again), and returns every draining replica:
// none of them is in the router's table.
func (c *Controller) drain(plan serving.ReplicaPlan, deps []store.DeploymentRecord, reps []store.Replica, now time.Time) map[string]bool {
	timeout := map[serving.Key]time.Duration{}
	for _, d := range deps {
		timeout[serving.Key{Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name}] = time.Duration(d.Spec.Request.RequestTimeoutMS) * time.Millisecond
	}
	keyOf := make(map[string]serving.Key, len(reps))
	for _, r := range reps {
		keyOf[r.RunID] = serving.Key{Endpoint: r.Endpoint, Deployment: r.Deployment}
	}
	c.serving.mu.Lock()
	defer c.serving.mu.Unlock()
	if c.serving.draining == nil {
		c.serving.draining = map[string]time.Time{}
	}
	out := make(map[string]bool, len(plan.Stop))
	for _, st := range plan.Stop {
		out[st.RunID] = true
		if _, ok := c.serving.draining[st.RunID]; !ok {
			wait := timeout[keyOf[st.RunID]]
			if wait <= 0 {
				wait = time.Duration(serving.DefaultRequest.RequestTimeoutMS) * time.Millisecond
			}
			c.serving.draining[st.RunID] = now.Add(wait)
		}
	}
	for id := range c.serving.draining {
		if !out[id] {
			delete(c.serving.draining, id)
		}
	}
	return out
}

// drained says whether a draining replica may be told to stop now.
func (c *Controller) drained(runID string, now time.Time) bool {
	c.serving.mu.Lock()
	defer c.serving.mu.Unlock()
	at, ok := c.serving.draining[runID]
	return ok && !now.Before(at)
}
