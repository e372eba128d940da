package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// A multi-node run has one status, reported by node 0's supervisor. The other nodes report only
// their failure: it is recorded, stops the run's nodes through their heartbeat replies, and
// becomes the run's reason when node 0 reports the end, after it collected every node's logs.

// nodeFailed records a non-leading node's report; only a failure matters (the first per node is
// kept). The reply stops the node.
func (c *Controller) nodeFailed(ctx context.Context, id string, rep api.StatusReport) (*api.StatusReply, error) {
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	if rep.Node >= nodeCount(r) {
		return nil, invalidf("node_rank: run %s has %d node(s), got %d", id, nodeCount(r), rep.Node)
	}
	out := reply(r)
	if r.Status.Terminal() {
		return out, nil
	}
	if rep.State == job.Failed {
		at := rep.Time
		if at.IsZero() {
			at = c.Now()
		}
		if err := c.Store.Runs.RecordNodeFailure(ctx, id, max(r.Attempt, 1), rep.Node, rep.Reason, rep.ExitCode, at); err != nil {
			return nil, err
		}
		c.Log.Info("node of a run failed; stopping its other nodes", "run", id, "node", rep.Node, "reason", rep.Reason)
		out.Cancel, out.Reason = true, rep.Reason
	}
	if len(rep.Warnings) > 0 {
		_, err := c.Store.RunWrites.UpdateRun(ctx, id, func(r *job.Run) ([]job.Event, error) {
			for _, w := range rep.Warnings {
				if w = fmt.Sprintf("node %d: %s", rep.Node, w); !slices.Contains(r.Warnings, w) {
					r.Warnings = append(r.Warnings, w)
				}
			}
			return nil, nil
		})
		if err != nil {
			return nil, mapStoreErr(err)
		}
	}
	if err := c.touch(ctx, id); err != nil {
		return nil, err
	}
	c.Changed(id)
	return out, nil
}

// ending prepares node 0's report of the run's end: the run's artifacts are assembled from what
// the nodes delivered (a supervisor that did not wait for the others leaves them out, and the
// run says so), and another node's failure makes the run fail with that node's reason, unless
// node 0 failed itself or the user canceled the run (other failures become warnings).
func (c *Controller) ending(ctx context.Context, id string, rep api.StatusReport) (api.StatusReport, error) {
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return rep, mapStoreErr(err)
	}
	if r.Status.Terminal() {
		return rep, nil // a late retry: apply absorbs or refuses it
	}
	if _, err := c.assemble(ctx, id, true); err != nil {
		return rep, fmt.Errorf("assemble artifacts of %s: %w", id, err)
	}
	if nodeCount(r) == 1 {
		return rep, nil
	}
	failed, err := c.nodeFailures(ctx, r)
	if err != nil || len(failed) == 0 {
		return rep, err
	}
	if rep.State != job.Failed && r.Status != job.CancelRequested {
		rep.State, rep.Reason, rep.ExitCode = job.Failed, failed[0].Failure, failed[0].ExitCode
		failed = failed[1:]
	}
	for _, f := range failed {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("node %d failed too: %s", f.Node, f.Failure))
	}
	return rep, nil
}

// stopNodes says why a multi-node run's nodes should stop their processes ("" when they should
// not): another node failed, or node 0's processes ended (node 0 reports Finalizing then). Either
// way the run is ending; the nodes are stopped before it ends so that their logs and outputs
// still reach its artifacts.
func (c *Controller) stopNodes(ctx context.Context, r *job.Run) (string, error) {
	failed, err := c.nodeFailures(ctx, r)
	switch {
	case err != nil:
		return "", err
	case len(failed) > 0:
		return failed[0].Failure, nil
	case r.Status == job.Finalizing:
		return "node 0's processes ended; the run is finalizing", nil
	}
	return "", nil
}

// nodeFailures are the failures other nodes reported in the run's current attempt, first first.
func (c *Controller) nodeFailures(ctx context.Context, r *job.Run) ([]store.RunPart, error) {
	parts, err := c.Store.Runs.RunParts(ctx, r.ID, max(r.Attempt, 1))
	if err != nil {
		return nil, err
	}
	var out []store.RunPart
	for _, p := range parts {
		if p.Node > 0 && p.Failure != "" {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FailedAt.Before(out[j].FailedAt) })
	return out, nil
}
