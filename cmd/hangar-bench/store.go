package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hangar-ml/hangar/internal/bench"
)

// storeGroup measures the API and job throughput on SQLite against PostgreSQL.
func storeGroup(ctx context.Context, bin, dir string, o bench.StoreOptions, asked bool) error {
	return databaseGroup("store", "-database", o.Database, asked,
		"The workspace database: PostgreSQL against SQLite",
		func() ([]bench.Figure, error) { return bench.Stores(ctx, bin, mkdir(dir, "store"), o) })
}

// replicasGroup measures a second server of one workspace on PostgreSQL (design 0020): a call
// through a follower against the leader, and a failover against a restart.
func replicasGroup(ctx context.Context, bin, dir string, o bench.ReplicaOptions, asked bool) error {
	return databaseGroup("replicas", "-replicas-database", o.Database, asked,
		"Several servers: a follower against the leader, a failover against a restart",
		func() ([]bench.Figure, error) { return bench.Replicas(ctx, bin, mkdir(dir, "replicas"), o) })
}

// databaseGroup runs a group that needs a new, empty PostgreSQL database (its flag): without one
// it is skipped when every group runs, and an error when asked for by name.
func databaseGroup(name, flag, database string, asked bool, title string, measure func() ([]bench.Figure, error)) error {
	if database == "" {
		if asked {
			return fmt.Errorf("the %s group needs %s postgres://... (a new, empty database)", name, flag)
		}
		fmt.Fprintf(os.Stderr, "hangar-bench: %s group skipped: no %s\n", name, flag)
		return nil
	}
	before := loadavg()
	figs, err := measure()
	if err != nil {
		return err
	}
	bench.FigureMarkdown(os.Stdout, fmt.Sprintf("%s (load average before: %s, after: %s)", title, before, loadavg()), figs)
	return nil
}
