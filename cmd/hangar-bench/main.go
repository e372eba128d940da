// Command hangar-bench runs the benchmarks recorded in BENCHMARKS.md and prints Markdown tables.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"

	"github.com/hangar-ml/hangar/internal/bench"
)

func main() {
	bin := flag.String("hangar", "bin/hangar", "the hangar binary to measure")
	n := flag.Int("n", 10, "repetitions of the job-overhead case")
	reps := flag.Int("tree-reps", 3, "repetitions of the tree cases (fresh content each)")
	files := flag.Int("files", 10000, "files in the submitted tree")
	size := flag.Int("size", 1024, "bytes per file in the submitted tree")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *bin, *n, *reps, *files, *size); err != nil {
		fmt.Fprintln(os.Stderr, "hangar-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin string, n, reps, files, size int) error {
	dir, err := os.MkdirTemp("", "hangar-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w, err := bench.Start(ctx, bin, dir)
	if err != nil {
		return err
	}
	defer w.Stop()
	fmt.Printf("machine: %s/%s, %d CPUs\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	rows, err := bench.Sleep1(ctx, w, dir, n)
	if err != nil {
		return err
	}
	bench.Markdown(os.Stdout, "Job overhead: `sleep 1` through hangar vs. directly (warm server)", rows)
	rows, err = bench.Tree10k(ctx, w, dir, files, size, reps)
	if err != nil {
		return err
	}
	bench.Markdown(os.Stdout, fmt.Sprintf("Submitting a %d-file code tree", files), rows)
	return nil
}
