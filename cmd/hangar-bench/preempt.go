package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/bench"
)

// preemptGroup measures the work a preemption costs on a real low-priority cluster (agents on
// this machine) with and without checkpoints, and prints the machine's load around it.
func preemptGroup(ctx context.Context, bin, dir string, o bench.PreemptOptions) error {
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	before := loadavg()
	figs, err := bench.Preemption(ctx, bin, mkdir(dir, "preempt"), repo, o)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("Preemptions on real nodes: %d per run, %s into each attempt, a %d-step job (load average before: %s, after: %s)",
		o.Preemptions, o.After, o.Steps, before, loadavg())
	bench.FigureMarkdown(os.Stdout, title, figs)
	return nil
}

// intList parses "5,15" into its numbers.
func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number of seconds", f)
		}
		out = append(out, n)
	}
	return out, nil
}
