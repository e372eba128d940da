package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hangar-ml/hangar/internal/bench"
)

// storeGroup measures the API and job throughput on SQLite against PostgreSQL. Without
// -database it is skipped when every group runs, and an error when asked for by name.
func storeGroup(ctx context.Context, bin, dir string, o bench.StoreOptions, asked bool) error {
	if o.Database == "" {
		if asked {
			return fmt.Errorf("the store group needs -database postgres://... (a new, empty database)")
		}
		fmt.Fprintln(os.Stderr, "hangar-bench: store group skipped: no -database")
		return nil
	}
	before := loadavg()
	figs, err := bench.Stores(ctx, bin, mkdir(dir, "store"), o)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("The workspace database: PostgreSQL against SQLite (load average before: %s, after: %s)", before, loadavg())
	bench.FigureMarkdown(os.Stdout, title, figs)
	return nil
}

// replicasGroup measures a second server of one workspace on PostgreSQL (design 0020): a call
// through a follower against the leader, and a failover against a restart. Without
// -replicas-database it is skipped when every group runs, and an error when asked for by name.
func replicasGroup(ctx context.Context, bin, dir string, o bench.ReplicaOptions, asked bool) error {
	if o.Database == "" {
		if asked {
			return fmt.Errorf("the replicas group needs -replicas-database postgres://... (a new, empty database)")
		}
		fmt.Fprintln(os.Stderr, "hangar-bench: replicas group skipped: no -replicas-database")
		return nil
	}
	before := loadavg()
	figs, err := bench.Replicas(ctx, bin, mkdir(dir, "replicas"), o)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("Several servers: a follower against the leader, a failover against a restart (load average before: %s, after: %s)", before, loadavg())
	bench.FigureMarkdown(os.Stdout, title, figs)
	return nil
}
