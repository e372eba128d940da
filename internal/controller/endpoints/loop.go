package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tick"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// servingTick is the serving loop's period (also woken by Wake).
const servingTick = time.Second

// failedBeforeReady is how many replicas in a row may fail before their deployment is Failed
// (it keeps trying, with backoff).
const failedBeforeReady = 3

// memo is what the serving loop keeps between passes (in memory: after a restart the backoff
// starts over).
type memo struct {
	mu       sync.Mutex
	failures map[serving.Key]failureStreak
	kick     tick.Kick
	// replicas are the replicas' run ids as of the last pass.
	replicas map[string]bool
	// draining are the replicas the plan stops, out of the router's table, and when they may be
	// told to stop (their requests in flight have had their request_timeout_ms).
	draining map[string]time.Time
	// alias is the alias loop's (alias.go).
	alias aliasMemo
}

type failureStreak struct {
	n      int
	last   time.Time
	reason string
	run    string
}

// Wake wakes the serving loop (an endpoint, a deployment or a replica changed).
func (s *Serving) Wake() { s.memo.kick.Kick() }

// Run keeps every deployment's replicas as its plan says, and runs the router's prober, until
// ctx ends.
func (s *Serving) Run(ctx context.Context) {
	go s.Router.RunProber(ctx)
	go s.followAliases(ctx)
	tick.Loop(ctx, servingTick, s.memo.kick, func(ctx context.Context) {
		if err := s.Pass(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("serving pass", "err", err)
		}
	})
}

// Pass is one pass of the serving loop: it reads the deployments and their replicas, asks
// serving.PlanReplicas what to do, does it, and publishes the router's table and the keys.
func (s *Serving) Pass(ctx context.Context) error {
	now := s.now()
	deps, err := s.store.Serving.Deployments(ctx, "")
	if err != nil {
		return err
	}
	reps, err := s.store.Serving.Replicas(ctx)
	if err != nil {
		return err
	}
	runs := map[string]*job.Run{}
	views := make([]serving.ReplicaView, 0, len(reps))
	for _, r := range reps {
		run, err := s.store.Runs.Run(ctx, r.RunID)
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
	s.noteFailures(views, runs)
	s.rememberReplicas(reps)
	wants := s.wants(deps, views, now)
	plan := serving.PlanReplicas(wants, views, now)
	// The router stops sending to a replica about to stop first; it is told to stop once the
	// requests it was sent have had their time (drain).
	stopping := s.drain(plan, deps, reps, now)
	t, auth, err := s.table(ctx, deps, reps, runs, stopping)
	if err != nil {
		return err
	}
	s.auth.Store(&auth)
	s.publish(t)
	s.applyPlan(ctx, plan, deps, now)
	s.updateStates(ctx, deps, views, runs)
	return nil
}

// rememberReplicas keeps the replicas' run ids, so that a change of one of their runs (it ended,
// its cancel was asked) wakes the serving loop at once (replicaChanged).
func (s *Serving) rememberReplicas(reps []store.Replica) {
	ids := make(map[string]bool, len(reps))
	for _, r := range reps {
		ids[r.RunID] = true
	}
	s.memo.mu.Lock()
	s.memo.replicas = ids
	s.memo.mu.Unlock()
}

// replicaChanged wakes the serving loop when a replica's run changed (an OnChange subscriber).
func (s *Serving) replicaChanged(runID string) {
	s.memo.mu.Lock()
	is := s.memo.replicas[runID]
	s.memo.mu.Unlock()
	if is {
		s.Wake()
	}
}

// noteFailures counts replicas that ended on their own (not stopped by Hangar) per deployment,
// and resets a deployment's count once one of its replicas is ready.
func (s *Serving) noteFailures(views []serving.ReplicaView, runs map[string]*job.Run) {
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	if s.memo.failures == nil {
		s.memo.failures = map[serving.Key]failureStreak{}
	}
	for _, v := range views {
		r := runs[v.RunID]
		switch {
		case v.Ready:
			delete(s.memo.failures, v.Key)
		case v.Ended && r.Status != job.Canceled:
			f := s.memo.failures[v.Key]
			at := s.now()
			if r.EndedAt != nil {
				at = *r.EndedAt
			}
			s.memo.failures[v.Key] = failureStreak{n: f.n + 1, last: at, run: r.ID,
				reason: fmt.Sprintf("replica %s %s: %s", r.ID, r.Status, r.StatusReason)}
		}
	}
}

// wants asks the autoscaler how many replicas each deployment should have now.
func (s *Serving) wants(deps []store.DeploymentRecord, views []serving.ReplicaView, now time.Time) []serving.Want {
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
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
		in.Samples, in.LastRequest = s.load(k, now)
		f := s.memo.failures[k]
		out = append(out, serving.Want{Key: k, Generation: d.Generation, Replicas: serving.DecideScale(in).Replicas,
			Failures: f.n, LastFailure: f.last})
	}
	return out
}

// applyPlan starts and stops replica runs and forgets the ended ones.
func (s *Serving) applyPlan(ctx context.Context, plan serving.ReplicaPlan, deps []store.DeploymentRecord, now time.Time) {
	for _, id := range plan.Forget {
		if err := s.store.Serving.DeleteReplica(ctx, id); err != nil {
			s.log.Warn("forget replica", "run", id, "err", err)
		}
	}
	for _, st := range plan.Stop {
		if !s.drained(st.RunID, now) {
			continue
		}
		if _, err := s.runs.Cancel(ctx, st.RunID); err != nil {
			s.log.Warn("stop replica", "run", st.RunID, "err", err)
			continue
		}
		s.log.Info("replica stopping", "run", st.RunID, "why", st.Reason)
	}
	for _, d := range deps {
		k := serving.Key{Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name}
		for range plan.Start[k] {
			if err := s.startReplica(ctx, d, now); err != nil {
				s.log.Error("start replica", "deployment", k.String(), "err", err)
				_ = s.store.Serving.SetDeploymentState(ctx, k.Endpoint, k.Deployment, DeploymentFailed, "start a replica: "+err.Error(), "")
				break
			}
		}
	}
}

// startReplica queues a run serving the deployment and records it as a replica.
func (s *Serving) startReplica(ctx context.Context, d store.DeploymentRecord, now time.Time) error {
	sp := serving.ReplicaSpec(d.Spec, d.Spec.Compute, d.Spec.Model.Manifest)
	// Its access to secrets is that of who last created or updated the deployment.
	sp.Properties = workspace.StampSubmitter(sp.Properties, d.Spec.Properties[workspace.PropSubmitter])
	r, err := s.runs.Queue(ctx, sp)
	if err != nil {
		return err
	}
	s.log.Info("replica started", "endpoint", d.Spec.Endpoint, "deployment", d.Spec.Name, "run", r.ID)
	return s.store.Serving.AddReplica(ctx, store.Replica{RunID: r.ID, Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name,
		Generation: d.Generation, CreatedAt: now})
}

// updateStates moves a deployment to Succeeded once a replica of its generation is ready (or
// it wants none), and to Failed while its replicas keep failing before any is ready.
func (s *Serving) updateStates(ctx context.Context, deps []store.DeploymentRecord, views []serving.ReplicaView, runs map[string]*job.Run) {
	s.memo.mu.Lock()
	failures, warn := s.memo.failures, s.memo.alias.warn
	s.memo.mu.Unlock()
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
			if w := warn[k]; w != "" {
				reason += "; warning: " + w
			}
		case f.n >= failedBeforeReady:
			state, reason = DeploymentFailed, fmt.Sprintf("%d replicas failed in a row; the last: %s", f.n, f.reason)
		case state == DeploymentCreating || state == DeploymentUpdating:
			reason = startingReason(k, d.Generation, views, runs)
		}
		if state != d.State || reason != d.Reason || (f.run != "" && f.run != d.LastFailed) {
			if err := s.store.Serving.SetDeploymentState(ctx, k.Endpoint, k.Deployment, state, reason, f.run); err != nil {
				s.log.Warn("deployment state", "deployment", k.String(), "err", err)
			}
		}
	}
}

// startingReason says why a deployment's generation has no replica ready yet: "starting
// replicas", and, while one of its replicas waits in its target's queue (a pool at its
// max_instances during a roll), what it waits for, as its run says it.
func startingReason(k serving.Key, gen int, views []serving.ReplicaView, runs map[string]*job.Run) string {
	for _, v := range views {
		if v.Key != k || v.Generation != gen || v.Ended {
			continue
		}
		if r := runs[v.RunID]; r != nil && r.Status == job.Queued && r.StatusReason != "" {
			return fmt.Sprintf("starting replicas: replica %s is queued: %s", r.ID, r.StatusReason)
		}
	}
	return "starting replicas"
}

// ReportServing records where a replica run answers (its supervisor's report).
func (s *Serving) ReportServing(ctx context.Context, runID, address string) error {
	host, port, err := net.SplitHostPort(address)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || host == "" || n < 1 || n > 65535 || len(address) > 300 {
		return invalidf("address: %q is not a host:port", address)
	}
	address = s.reachableAddress(ctx, runID, host, port)
	if err := s.store.Serving.SetReplicaAddress(ctx, runID, address); err != nil {
		return notFound(err, "run %s is not a replica of a deployment", runID)
	}
	s.log.Info("replica serving", "run", runID, "address", address)
	s.Wake()
	return nil
}

// reachableAddress is where the server reaches a replica that reported host:port. A supervisor
// on an attached VM reaches the server through a reverse tunnel on the VM's loopback, so the
// address it sees is the VM's loopback: the server reaches the replica at the VM's own host.
func (s *Serving) reachableAddress(ctx context.Context, runID, host, port string) string {
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return net.JoinHostPort(host, port)
	}
	if r, err := s.store.Runs.Run(ctx, runID); err == nil {
		if t, err := s.store.Cluster.Compute(ctx, r.Compute); err == nil && compute.VMHost(*t) != "" {
			return net.JoinHostPort(compute.VMHost(*t), port)
		}
	}
	return net.JoinHostPort(host, port)
}

// drain records the replicas the plan stops (when first seen: they may be stopped once their
// deployment's request_timeout_ms has passed, the longest a request sent to them can last),
// forgets those the plan no longer stops (they serve again), and returns every draining replica:
// none of them is in the router's table.
func (s *Serving) drain(plan serving.ReplicaPlan, deps []store.DeploymentRecord, reps []store.Replica, now time.Time) map[string]bool {
	timeout := map[serving.Key]time.Duration{}
	for _, d := range deps {
		timeout[serving.Key{Endpoint: d.Spec.Endpoint, Deployment: d.Spec.Name}] = time.Duration(d.Spec.Request.RequestTimeoutMS) * time.Millisecond
	}
	keyOf := make(map[string]serving.Key, len(reps))
	for _, r := range reps {
		keyOf[r.RunID] = serving.Key{Endpoint: r.Endpoint, Deployment: r.Deployment}
	}
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	if s.memo.draining == nil {
		s.memo.draining = map[string]time.Time{}
	}
	out := make(map[string]bool, len(plan.Stop))
	for _, st := range plan.Stop {
		out[st.RunID] = true
		if _, ok := s.memo.draining[st.RunID]; !ok {
			wait := timeout[keyOf[st.RunID]]
			if wait <= 0 {
				wait = time.Duration(serving.DefaultRequest.RequestTimeoutMS) * time.Millisecond
			}
			s.memo.draining[st.RunID] = now.Add(wait)
		}
	}
	for id := range s.memo.draining {
		if !out[id] {
			delete(s.memo.draining, id)
		}
	}
	return out
}

// drained says whether a draining replica may be told to stop now.
func (s *Serving) drained(runID string, now time.Time) bool {
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	at, ok := s.memo.draining[runID]
	return ok && !now.Before(at)
}
