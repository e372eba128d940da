package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hangar-ml/hangar/internal/bench"
)

// clusterGroup measures trivial jobs through a 2-node local cluster against Slurm draining the
// same number of jobs on the project's test cluster, and prints the machine's load around it
// (the benchmark is CPU-bound: a busy machine shows in every figure).
func clusterGroup(ctx context.Context, bin, dir string, o options) error {
	co := o.cluster
	co.Conc = o.conc
	if o.clusterSlurm {
		repo, err := os.Getwd()
		if err != nil {
			return err
		}
		if co.Slurm, err = bench.StartSlurm(ctx, repo); err != nil {
			return err
		}
	}
	before := loadavg()
	figs, err := bench.Cluster(ctx, bin, mkdir(dir, "cluster"), co)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("Managed cluster: %d trivial jobs through 2 local nodes vs. Slurm (load average before: %s, after: %s)",
		co.Jobs, before, loadavg())
	bench.FigureMarkdown(os.Stdout, title, figs)
	return nil
}

// loadavg is the machine's 1-minute load average.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
