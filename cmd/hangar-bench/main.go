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
	many := flag.Int("many", 500, "jobs submitted in the slurm group's throughput case")
	only := flag.String("only", "", "run one group: overhead, tree, env, ssh or slurm (default all)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *bin, *n, *reps, *files, *size, *many, *only); err != nil {
		fmt.Fprintln(os.Stderr, "hangar-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin string, n, reps, files, size, many int, only string) error {
	dir, err := os.MkdirTemp("", "hangar-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pip, err := bench.Wheelhouse(dir + "/wheels")
	if err != nil {
		return err
	}
	w, err := bench.Start(ctx, bin, dir, pip...)
	if err != nil {
		return err
	}
	defer w.Stop()
	fmt.Printf("machine: %s/%s, %d CPUs\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	groups := []struct {
		name, title string
		fn          func() ([]bench.Row, error)
	}{
		{"overhead", "Job overhead: `sleep 1` through hangar vs. directly (warm server)",
			func() ([]bench.Row, error) { return bench.Sleep1(ctx, w, dir, n) }},
		{"tree", fmt.Sprintf("Submitting a %d-file code tree", files),
			func() ([]bench.Row, error) { return bench.Tree10k(ctx, w, dir, files, size, reps) }},
		{"env", "Preparing with a cached environment vs. its first build",
			func() ([]bench.Row, error) { return bench.Environments(ctx, w, dir, 5) }},
		{"ssh", "Attached VM over SSH: `sleep 1` through hangar vs. `ssh host 'sleep 1'`",
			func() ([]bench.Row, error) { return sshGroup(ctx, w, dir, n, files, size) }},
		{"slurm", "Slurm target: a short job through hangar vs. plain `sbatch` on the same cluster",
			func() ([]bench.Row, error) { return slurmGroup(ctx, w, dir, n, many) }},
	}
	for _, g := range groups {
		if only != "" && only != g.name {
			continue
		}
		rows, err := g.fn()
		if err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		bench.Markdown(os.Stdout, g.title, rows)
	}
	return nil
}

// sshGroup runs the SSH benchmarks against an sshd on loopback and prints the tree table itself.
func sshGroup(ctx context.Context, w *bench.Workspace, dir string, n, files, size int) ([]bench.Row, error) {
	repo, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	h, err := bench.StartSSH(ctx, repo, dir+"/sshd")
	if err != nil {
		return nil, err
	}
	defer h.Stop(repo)
	rows, tree, err := bench.SSH(ctx, w, h, dir, n, files, size)
	if err != nil {
		return nil, err
	}
	defer bench.Markdown(os.Stdout, fmt.Sprintf("Attached VM: bytes sent to the host for a %d-file tree", files), tree)
	return rows, nil
}

// slurmGroup runs the Slurm benchmarks against the test cluster of scripts/setup/slurm.sh.
func slurmGroup(ctx context.Context, w *bench.Workspace, dir string, n, many int) ([]bench.Row, error) {
	repo, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	sc, err := bench.StartSlurm(ctx, repo)
	if err != nil {
		return nil, err
	}
	return bench.Slurm(ctx, w, sc, dir, n, many)
}
