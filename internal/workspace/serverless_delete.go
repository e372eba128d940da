package workspace

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// deleteServerlessClusters is the part of deleting the serverless pool that concerns its
// clusters (serverless_<size>): they exist only for the pool, so they go with it. While runs are
// active on any of them the delete is refused, naming those runs, unless force, which cancels
// them as compute delete --force does on a target. Other targets are left alone.
func (cp *Computes) deleteServerlessClusters(ctx context.Context, t *compute.Target, force bool) error {
	if t.Type != compute.TypeServerless {
		return nil
	}
	clusters, err := cp.serverlessClusterNames(ctx)
	if err != nil {
		return err
	}
	var active []*job.Run
	for _, name := range clusters {
		runs, err := cp.ws.Store.Runs.List(ctx, store.RunFilter{Active: true, Compute: name})
		if err != nil {
			return err
		}
		active = append(active, runs...)
	}
	if len(active) > 0 && !force {
		return Conflictf("the serverless pool's clusters have %s: %s; cancel them or wait for them to end, or use --force",
			pluralRuns(len(active)), describeRuns(active))
	}
	for _, r := range active {
		if _, err := cp.ws.Runs.Cancel(ctx, r.ID); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != Conflict {
				return fmt.Errorf("cancel %s: %w", r.ID, err)
			}
		}
	}
	for _, name := range clusters {
		if err := cp.ws.Store.Cluster.DeleteCompute(ctx, name); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("delete serverless cluster %s: %w", name, err)
		}
		cp.ws.Runs.ForgetTarget(name)
		cp.ws.Log.Info("serverless cluster deleted with its pool", "cluster", name)
	}
	return nil
}

// serverlessClusterNames lists the pool's clusters, by name.
func (cp *Computes) serverlessClusterNames(ctx context.Context) ([]string, error) {
	ts, err := cp.ws.Store.Cluster.Computes(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range ts {
		if t.Type == compute.TypeCluster && compute.ServerlessSizeOf(t.Name) != "" {
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// describeRuns names runs with their cluster, the first few of them.
func describeRuns(runs []*job.Run) string {
	const shown = 5
	var parts []string
	for i, r := range runs {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(runs)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s on %s)", r.ID, r.Status, r.Compute))
	}
	return strings.Join(parts, ", ")
}

func pluralRuns(n int) string {
	if n == 1 {
		return "1 active run"
	}
	return fmt.Sprintf("%d active runs", n)
}
