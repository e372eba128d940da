// Command hangar-bench runs the benchmarks recorded in BENCHMARKS.md and prints Markdown tables.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/bench"
)

func main() {
	bin := flag.String("hangar", "bin/hangar", "the hangar binary to measure")
	n := flag.Int("n", 10, "repetitions of the job-overhead case")
	reps := flag.Int("tree-reps", 3, "repetitions of the tree cases (fresh content each)")
	files := flag.Int("files", 10000, "files in the submitted tree")
	size := flag.Int("size", 1024, "bytes per file in the submitted tree")
	many := flag.Int("many", 500, "jobs submitted in the slurm group's throughput case")
	var o options
	flag.IntVar(&o.jobs, "jobs", 500, "jobs per repetition of the local throughput case")
	flag.IntVar(&o.conc, "conc", 8, "concurrent submitters in the local throughput case")
	flag.IntVar(&o.tpReps, "tp-reps", 3, "repetitions of the local throughput case")
	flag.BoolVar(&o.syncs, "syncs", false, "also count the sync calls of one throughput round with strace (slows that round)")
	flag.IntVar(&o.idle.Queued, "queued", 10000, "runs left waiting in the idle group")
	flag.DurationVar(&o.idle.Window, "window", 30*time.Second, "how long the idle group samples the server's CPU")
	flag.DurationVar(&o.idle.Settle, "settle", 10*time.Second, "how long the idle group waits before sampling")
	flag.IntVar(&o.idle.Requests, "requests", 300, "API requests per latency case of the idle group")
	flag.BoolVar(&o.idle.Cluster, "idle-cluster", false, "queue the idle group's runs on a 1-node managed cluster instead of a local target")
	flag.IntVar(&o.cluster.Jobs, "cluster-jobs", 200, "jobs per case of the cluster group")
	flag.StringVar(&o.cluster.Before, "cluster-before", "", "an older hangar binary the cluster group also measures (e.g. the last release)")
	flag.BoolVar(&o.clusterSlurm, "cluster-slurm", true, "measure Slurm's drain as the cluster group's baseline (scripts/setup/slurm.sh)")
	flag.IntVar(&o.studioLines, "studio-lines", 300, "log lines timed by the studio group")
	flag.IntVar(&o.tracking.Writers, "writers", 50, "concurrent log-batch writers in the tracking group")
	flag.IntVar(&o.tracking.Batches, "batches", 100, "log-batch requests per writer in the tracking group")
	flag.DurationVar(&o.tracking.Interval, "batch-interval", 100*time.Millisecond, "how often each writer of the tracking group logs a batch")
	flag.IntVar(&o.tracking.Runs, "search-runs", 30000, "runs searched over in the tracking group")
	flag.IntVar(&o.tracking.BaseRuns, "search-base-runs", 1000, "runs of the tracking group's baseline search")
	flag.IntVar(&o.tracking.Searches, "searches", 20, "timed searches per case of the tracking group")
	flag.IntVar(&o.kube.Queued, "kube-queued", 1000, "jobs left Pending in Kubernetes in the kubernetes group")
	flag.IntVar(&o.kube.Requests, "kube-requests", 300, "API requests per latency case of the kubernetes group")
	flag.DurationVar(&o.kube.Window, "kube-window", 10*time.Second, "how long the kubernetes group samples CPU at each queue length")
	flag.StringVar(&o.kube.Supervisor, "kube-supervisor", "", "a directory holding a static hangar for the kubernetes group's pods (default: -hangar's when static, else built)")
	flag.IntVar(&o.access.Requests, "access-requests", 500, "sequential requests per case and round of the access group")
	flag.IntVar(&o.access.Rounds, "access-rounds", 3, "rounds of the access group")
	flag.IntVar(&o.router.Requests, "router-requests", 5000, "sequential requests per latency round of the router group, each side")
	flag.IntVar(&o.router.Rounds, "router-rounds", 3, "latency rounds of the router group")
	flag.IntVar(&o.router.Conc, "router-conc", 32, "concurrent callers in the router group's throughput case")
	flag.DurationVar(&o.router.Window, "router-window", 5*time.Second, "how long each throughput case of the router group runs")
	flag.IntVar(&o.sweep.Trials, "sweep-trials", 64, "max_total_trials of every simulated sweep in the sweep group")
	flag.IntVar(&o.sweep.Seeds, "sweep-seeds", 10, "seeds per method and objective in the sweep group")
	flag.IntVar(&o.sweep.Workers, "sweep-workers", 4, "max_concurrent_trials of the sweep group's sweeps")
	flag.IntVar(&o.sweep.Reports, "sweep-reports", 27, "metric reports in a full trial of the sweep group (asha's max_resource)")
	flag.IntVar(&o.preempt.Steps, "preempt-steps", 360, "steps (4 a second) of the preempt group's job")
	flag.IntVar(&o.preempt.Preemptions, "preemptions", 2, "preemptions per run of the preempt group")
	flag.DurationVar(&o.preempt.After, "preempt-after", 38*time.Second, "how far into each attempt the preempt group takes the node away (not a multiple of an interval: a save just before the preemption would hide the interval's cost)")
	preemptIntervals := flag.String("preempt-intervals", "5,15", "checkpoint intervals (seconds, comma-separated) the preempt group measures")
	flag.StringVar(&o.stores.Database, "database", "", "URL of a new, empty PostgreSQL database for the store group (required by it)")
	flag.IntVar(&o.stores.Jobs, "store-jobs", 300, "jobs per throughput round of the store group")
	flag.IntVar(&o.stores.Conc, "store-conc", 8, "concurrent submitters in the store group")
	flag.IntVar(&o.stores.Reps, "store-reps", 3, "throughput rounds of the store group")
	flag.IntVar(&o.stores.Requests, "store-requests", 300, "sequential requests per latency case of the store group")
	flag.StringVar(&o.replicas.Database, "replicas-database", "", "URL of a new, empty PostgreSQL database for the replicas group (required by it)")
	flag.IntVar(&o.replicas.Requests, "replicas-requests", 300, "sequential requests per latency case of the replicas group")
	flag.IntVar(&o.replicas.Kills, "replicas-kills", 5, "kill -9 rounds of the replicas group, each side")
	only := flag.String("only", "", "run one group: overhead, tree, env, ssh, slurm, throughput, idle, cluster, tracking, studio, kubernetes, router, access, preempt, store, replicas, sweep or pipeline (default all; sweep needs no server)")
	flag.Parse()
	var err error
	if o.preempt.Intervals, err = intList(*preemptIntervals); err != nil {
		fmt.Fprintln(os.Stderr, "hangar-bench: -preempt-intervals:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *bin, *n, *reps, *files, *size, *many, *only, o); err != nil {
		fmt.Fprintln(os.Stderr, "hangar-bench:", err)
		os.Exit(1)
	}
}

// options size the throughput and idle groups.
type options struct {
	jobs, conc, tpReps int
	syncs              bool
	idle               bench.IdleOptions
	cluster            bench.ClusterOptions
	clusterSlurm       bool
	studioLines        int
	tracking           bench.TrackingOptions
	kube               bench.KubeOptions
	router             bench.RouterOptions
	access             bench.AccessOptions
	sweep              bench.SweepOptions
	preempt            bench.PreemptOptions
	stores             bench.StoreOptions
	replicas           bench.ReplicaOptions
}

func run(ctx context.Context, bin string, n, reps, files, size, many int, only string, o options) error {
	if only == "sweep" { // a simulation of its own: no workspace to start
		return sweepGroup(o.sweep)
	}
	dir, err := os.MkdirTemp("", "hangar-bench")
	if err != nil {
		return err
	}
	defer func() {
		if os.Getenv("HANGAR_BENCH_KEEP") == "" {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "kept", dir)
		}
	}()
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
		{"throughput", "", func() ([]bench.Row, error) { return nil, throughputGroup(ctx, bin, dir, o) }},
		{"idle", "", func() ([]bench.Row, error) { return nil, idleGroup(ctx, bin, dir, o.idle) }},
		{"cluster", "", func() ([]bench.Row, error) { return nil, clusterGroup(ctx, bin, dir, o) }},
		{"studio", "", func() ([]bench.Row, error) { return nil, studioGroup(ctx, bin, dir, o.studioLines) }},
		{"tracking", "", func() ([]bench.Row, error) { return nil, trackingGroup(ctx, bin, dir, o.tracking) }},
		{"kubernetes", "", func() ([]bench.Row, error) { return nil, kubeGroup(ctx, bin, dir, n, o.kube) }},
		{"router", "", func() ([]bench.Row, error) { return nil, routerGroup(ctx, o.router) }},
		{"access", "", func() ([]bench.Row, error) { return nil, accessGroup(ctx, bin, dir, o.access) }},
		{"preempt", "", func() ([]bench.Row, error) { return nil, preemptGroup(ctx, bin, dir, o.preempt) }},
		{"store", "", func() ([]bench.Row, error) { return nil, storeGroup(ctx, bin, dir, o.stores, only == "store") }},
		{"replicas", "", func() ([]bench.Row, error) { return nil, replicasGroup(ctx, bin, dir, o.replicas, only == "replicas") }},
		{"coldstart", "", func() ([]bench.Row, error) { return nil, coldStartGroup(ctx, bin, dir, n) }},
		{"sweep", "", func() ([]bench.Row, error) { return nil, sweepGroup(o.sweep) }},
		{"pipeline", "A 10-step chain of short steps: by hand, as a pipeline, and fully cached",
			func() ([]bench.Row, error) { return bench.Pipeline(ctx, w, dir, 10, n) }},
	}
	for _, g := range groups {
		if only != "" && only != g.name {
			continue
		}
		rows, err := g.fn()
		if err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		if g.title != "" {
			bench.Markdown(os.Stdout, g.title, rows)
		}
	}
	return nil
}

// throughputGroup measures trivial jobs through the API on a fresh workspace of its own (the
// runs of other groups would weigh on its job list), then, with -syncs, counts the sync calls
// of one more round under strace.
func throughputGroup(ctx context.Context, bin, dir string, o options) error {
	w, err := bench.Start(ctx, bin, mkdir(dir, "throughput"))
	if err != nil {
		return err
	}
	defer w.Stop()
	figs, err := bench.Throughput(ctx, w, o.jobs, o.conc, o.tpReps)
	if err != nil {
		return err
	}
	title := "Local target through the API: trivial jobs vs. detached processes"
	if o.syncs {
		var c bench.SyncCount
		if c, err = bench.Syncs(ctx, w, dir, o.jobs, o.conc); err != nil {
			return err
		}
		figs = append(figs, syncFigures("server", c.Server, o.jobs)...)
		figs = append(figs, syncFigures("supervisors and their commands", c.Children, o.jobs)...)
	}
	bench.FigureMarkdown(os.Stdout, title, figs)
	return nil
}

// syncFigures are the sync calls per job of one side, in all and by what they synced.
func syncFigures(who string, counts map[string]int, jobs int) []bench.Figure {
	figs := []bench.Figure{{Name: "sync calls per job: " + who, Value: float64(bench.Total(counts)) / float64(jobs), Unit: "per job"}}
	names := slices.Sorted(maps.Keys(counts))
	for _, k := range names {
		figs = append(figs, bench.Figure{Name: "… of which " + k, Value: float64(counts[k]) / float64(jobs), Unit: "per job"})
	}
	return figs
}

// idleGroup measures a server at rest with a long queue, on a fresh workspace of its own.
func idleGroup(ctx context.Context, bin, dir string, o bench.IdleOptions) error {
	w, err := bench.Start(ctx, bin, mkdir(dir, "idle"))
	if err != nil {
		return err
	}
	defer w.Stop()
	cpu, lat, err := bench.Idle(ctx, w, o)
	if err != nil {
		return err
	}
	bench.FigureMarkdown(os.Stdout, fmt.Sprintf("Server CPU while %d runs wait and nothing changes", o.Queued), cpu)
	bench.FigureMarkdown(os.Stdout, fmt.Sprintf("API latency with %d runs queued", o.Queued), lat)
	return nil
}

// studioGroup times log lines from a running job to the web studio in headless Chromium, on a
// fresh workspace of its own.
func studioGroup(ctx context.Context, bin, dir string, lines int) error {
	w, err := bench.Start(ctx, bin, mkdir(dir, "studio"))
	if err != nil {
		return err
	}
	defer w.Stop()
	figs, err := bench.StudioLatency(ctx, w, lines)
	if err != nil {
		return err
	}
	bench.FigureMarkdown(os.Stdout, "Log line → visible in the web studio (headless Chromium, a line every 0.1 s)", figs)
	return nil
}

// trackingGroup measures the MLflow tracking API on a fresh workspace of its own.
func trackingGroup(ctx context.Context, bin, dir string, o bench.TrackingOptions) error {
	w, err := bench.Start(ctx, bin, mkdir(dir, "tracking"))
	if err != nil {
		return err
	}
	defer w.Stop()
	figs, err := bench.Tracking(ctx, w, o)
	if err != nil {
		return err
	}
	bench.FigureMarkdown(os.Stdout, "MLflow tracking API: logging and search", figs)
	return nil
}

func mkdir(parent, name string) string {
	d := filepath.Join(parent, name)
	_ = os.MkdirAll(d, 0o755)
	return d
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

// kubeGroup runs the Kubernetes benchmarks against the test cluster of
// scripts/setup/kubernetes.sh, each part on a fresh workspace of its own.
func kubeGroup(ctx context.Context, bin, dir string, n int, o bench.KubeOptions) error {
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	kc, err := bench.StartKube(ctx, repo)
	if err != nil {
		return err
	}
	o.N = n
	if o.Supervisor == "" {
		if o.Supervisor, err = bench.SupervisorDir(ctx, bin, repo, dir); err != nil {
			return err
		}
	}
	w, err := bench.Start(ctx, bin, mkdir(dir, "kube-latency"))
	if err != nil {
		return err
	}
	defer w.Stop()
	load := bench.LoadAverage()
	figs, steps, err := bench.KubeLatency(ctx, w, kc, mkdir(dir, "kube-latency"), o)
	if err != nil {
		return err
	}
	fmt.Printf("\nload average before → after: %s → %s\n", load, bench.LoadAverage())
	bench.FigureMarkdown(os.Stdout, "Kubernetes target: a one-pod job (`sleep 2`) on the real kubelet, through hangar vs. `kubectl create -f`", figs)
	bench.FigureMarkdown(os.Stdout, "… where the time goes: milestones since the submission", steps)
	wq, err := bench.Start(ctx, bin, mkdir(dir, "kube-queue"))
	if err != nil {
		return err
	}
	defer wq.Stop()
	load = bench.LoadAverage()
	q, err := bench.KubeQueue(ctx, wq, kc, mkdir(dir, "kube-queue"), o)
	if err != nil {
		return err
	}
	fmt.Printf("\nload average before → after: %s → %s\n", load, bench.LoadAverage())
	bench.FigureMarkdown(os.Stdout, fmt.Sprintf("Kubernetes target: %d jobs Pending (a GPU each, no node has one)", o.Queued), q.Queue)
	bench.FigureMarkdown(os.Stdout, "… the server's API latency by queue length", q.Latency)
	bench.FigureMarkdown(os.Stdout, "… CPU by queue length, nothing changing", q.CPU)
	return nil
}

// routerGroup measures the endpoint router against calling a no-op replica directly, noting
// the machine's load around it.
// coldStartGroup measures a deployment's first answer from zero replicas (internal/bench/coldstart.go).
func coldStartGroup(ctx context.Context, bin, dir string, rounds int) error {
	w, err := bench.Start(ctx, bin, mkdir(dir, "coldstart"))
	if err != nil {
		return err
	}
	defer w.Stop()
	load := bench.LoadAverage()
	figs, err := bench.ColdStart(ctx, w, mkdir(dir, "coldstart-files"), rounds)
	if err != nil {
		return err
	}
	fmt.Printf("\nload average before → after: %s → %s\n", load, bench.LoadAverage())
	bench.FigureMarkdown(os.Stdout, "Online endpoint: first answer after scale from zero vs. the next answer (local target, host python)", figs)
	return nil
}

// sweepGroup simulates sweeps on synthetic objectives, driving the sweep engine directly.
func sweepGroup(o bench.SweepOptions) error {
	fmt.Printf("\nmachine: %s/%s, %d CPUs, load average %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), bench.LoadAverage())
	return bench.Sweeps(os.Stdout, o)
}

func routerGroup(ctx context.Context, o bench.RouterOptions) error {
	load := bench.LoadAverage()
	figs, err := bench.Router(ctx, o)
	if err != nil {
		return err
	}
	fmt.Printf("\nload average before → after: %s → %s\n", load, bench.LoadAverage())
	bench.FigureMarkdown(os.Stdout, "Endpoint router: a no-op deployment through the router vs. the replica called directly (callers, router and replica on the same cores)", figs)
	return nil
}

func accessGroup(ctx context.Context, bin, dir string, o bench.AccessOptions) error {
	load := bench.LoadAverage()
	figs, err := bench.Access(ctx, bin, dir, o)
	if err != nil {
		return err
	}
	fmt.Printf("\nload average before → after: %s → %s\n", load, bench.LoadAverage())
	bench.FigureMarkdown(os.Stdout, "API latency by token and transport: `GET /api/jobs?limit=50` (workspace token over HTTP is the baseline)", figs)
	return nil
}
