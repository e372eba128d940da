package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// KubeQueueResult holds the tables of the queued-jobs benchmark.
type KubeQueueResult struct{ Queue, Latency, CPU []Figure }

// KubeQueue leaves o.Queued jobs Pending in Kubernetes (the gpu instance type fits no node):
// the submission rate through Hangar's API (8 clients) until all are Queued and until every run
// shows the scheduler's reason, against creating as many plain Jobs through the Kubernetes API
// (8 clients) until every pod is Unschedulable; the server's API latency (GET /api/jobs/<id> of
// a queued run, and the job list) and CPU (the server's, the API server's) with 1, 50 and
// o.Queued runs queued; `hangar job show` of every run; then the cancel of all, until all are
// Canceled and the cluster holds nothing of theirs.
func KubeQueue(ctx context.Context, w *Workspace, k *KubeCluster, dir string, o KubeOptions) (KubeQueueResult, error) {
	var res KubeQueueResult
	if err := k.attach(ctx, w, dir, o.Supervisor); err != nil {
		return res, err
	}
	c, err := w.client()
	if err != nil {
		return res, err
	}
	tag := stamp()
	defer k.sweep(ctx, tag)
	base, err := k.plainQueue(ctx, tag, o.Queued)
	if err != nil {
		return res, err
	}
	names := make([]string, o.Queued)
	for i := range names {
		names[i] = fmt.Sprintf("%s-q-%d", tag, i)
	}
	prefix := tag + "-q-"
	stages, queued := []int{1, min(50, o.Queued), o.Queued}, 0
	var lat []stageLatency
	for _, s := range stages {
		if s <= queued {
			continue
		}
		start := time.Now()
		if err := submitKube(ctx, c, names[queued:s]); err != nil {
			return res, err
		}
		accepted := time.Since(start)
		pending, err := waitUntil(ctx, start, fmt.Sprintf("%d runs show the scheduler's reason", s), func() (int, bool, error) {
			n, err := countRuns(ctx, c, prefix, func(d api.RunDetail) (bool, error) {
				if d.Status != job.Queued {
					return false, fmt.Errorf("run %s: %s (%s), not Queued", d.ID, d.Status, d.StatusReason)
				}
				return strings.Contains(d.StatusReason, gpuReason), nil
			})
			return n, n == s, err
		})
		if err != nil {
			return res, err
		}
		if s == o.Queued {
			res.Queue = append(res.Queue, rate(base.created, fmt.Sprintf("%d jobs through Hangar's API, 8 clients: all Queued", s-queued), s-queued, accepted),
				rate(base.pending, fmt.Sprintf("%d jobs through Hangar's API: all show the scheduler's reason", s-queued), s-queued, pending))
		}
		queued = s
		l, err := measureStage(ctx, w, c, k, names[0], s, o)
		if err != nil {
			return res, err
		}
		lat = append(lat, l)
	}
	res.Queue = append([]Figure{base.created, base.pending}, res.Queue...)
	res.Latency, res.CPU = stageFigures(lat)
	shown, err := checkShown(ctx, w, names)
	if err != nil {
		return res, err
	}
	res.Queue = append(res.Queue, Figure{Name: fmt.Sprintf("`hangar job show` of each queued run names the scheduler's reason (%s): %d of %d",
		gpuReason, shown, len(names)), Value: 100 * float64(shown) / float64(len(names)), Unit: "%"})
	cancels, err := cancelKube(ctx, c, k, names, prefix, base.deleted)
	res.Queue = append(res.Queue, cancels...)
	return res, err
}

// queueBase is the baseline of the queued-jobs benchmark: rates of plain Jobs, and how long
// the cluster takes to remove them.
type queueBase struct{ created, pending, deleted Figure }

// plainQueue creates n plain Jobs that fit no node (a GPU each) through the Kubernetes API, 8 at
// a time, times until all are created and until every pod is Unschedulable, then deletes them
// (one DeleteCollection, background propagation) and times until they and their pods are gone,
// so that the scheduler's queue is Hangar's alone afterwards.
func (k *KubeCluster) plainQueue(ctx context.Context, tag string, n int) (queueBase, error) {
	jobs, pods := k.cs.BatchV1().Jobs(kubeNamespace), k.cs.CoreV1().Pods(kubeNamespace)
	sel := metav1.ListOptions{LabelSelector: labelPlain + "=" + tag}
	start := time.Now()
	err := parallel(n, 8, func(i int) error {
		_, err := jobs.Create(ctx, plainJob(fmt.Sprintf("%s-pq-%d", tag, i), tag, true, "sleep", "2"), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return queueBase{}, fmt.Errorf("create plain Jobs: %w", err)
	}
	created := time.Since(start)
	pending, err := waitUntil(ctx, start, fmt.Sprintf("%d plain pods are Unschedulable", n), func() (int, bool, error) {
		list, err := pods.List(ctx, sel)
		if err != nil {
			return 0, false, err
		}
		count := 0
		for _, p := range list.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					count++
				}
			}
		}
		return count, count == n, nil
	})
	if err != nil {
		return queueBase{}, err
	}
	bg := metav1.DeletePropagationBackground
	start = time.Now()
	if err := jobs.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, sel); err != nil {
		return queueBase{}, fmt.Errorf("delete the plain Jobs: %w", err)
	}
	gone, err := waitUntil(ctx, start, "the plain Jobs and pods are gone", func() (int, bool, error) {
		j, err := jobs.List(ctx, sel)
		if err != nil {
			return 0, false, err
		}
		p, err := pods.List(ctx, sel)
		if err != nil {
			return 0, false, err
		}
		left := len(j.Items) + len(p.Items)
		return left, left == 0, nil
	})
	if err != nil {
		return queueBase{}, err
	}
	what := fmt.Sprintf("%d plain Jobs through the Kubernetes API, 8 clients", n)
	return queueBase{created: rate(Figure{}, what+": all created", n, created),
		pending: rate(Figure{}, what+": all pods Unschedulable", n, pending),
		deleted: Figure{Name: fmt.Sprintf("%d plain Jobs deleted (one DeleteCollection): no Job or pod left", n), Value: gone.Seconds(), Unit: "s"}}, nil
}

// rate is n jobs in d as a figure in jobs/s (against base, unless it has no name).
func rate(base Figure, name string, n int, d time.Duration) Figure {
	name = fmt.Sprintf("%s (%.1f s)", name, d.Seconds())
	v := float64(n) / d.Seconds()
	if base.Name == "" {
		return Figure{Name: name, Value: v, Unit: "jobs/s"}
	}
	return against(base, name, v, "jobs/s", nil)
}

// waitUntil polls check every 250 ms and returns the time since start when it said done; every
// 30 s it says on stderr how far it got. It gives up after 30 minutes, or after 5 minutes in
// which the count did not move (another user of the shared cluster may have removed what it
// waits for).
func waitUntil(ctx context.Context, start time.Time, what string, check func() (n int, done bool, err error)) (time.Duration, error) {
	said, moved, last := time.Now(), time.Now(), -1
	for deadline := time.Now().Add(30 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		n, done, err := check()
		if err != nil {
			return 0, fmt.Errorf("wait until %s: %w", what, err)
		}
		if done {
			return time.Since(start), nil
		}
		if n != last {
			moved, last = time.Now(), n
		} else if time.Since(moved) > 5*time.Minute {
			return 0, fmt.Errorf("wait until %s: stuck at %d for 5 minutes", what, n)
		}
		if time.Since(said) > 30*time.Second {
			fmt.Fprintf(os.Stderr, "kubernetes: waiting until %s: %d so far, %.0f s\n", what, n, time.Since(start).Seconds())
			said = time.Now()
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
	return 0, fmt.Errorf("not done after 30 minutes: %s", what)
}

// submitKube creates the runs names on the gpu instance type through the API, 8 at a time.
func submitKube(ctx context.Context, c *api.Client, names []string) error {
	return parallel(len(names), 8, func(i int) error {
		sp := job.Spec{Command: "sleep 2", Compute: kubeTarget, Name: names[i], Resources: job.Resources{InstanceType: "gpu"}}
		_, err := c.Jobs.Create(ctx, api.CreateJobRequest{Spec: sp})
		return err
	})
}

// countRuns counts the runs whose name has prefix that count says yes to, over every page of
// the job list.
func countRuns(ctx context.Context, c *api.Client, prefix string, count func(api.RunDetail) (bool, error)) (int, error) {
	q := api.JobListQuery{Query: prefix, Limit: 1000}
	n := 0
	for {
		page, err := c.Jobs.ListPage(ctx, q)
		if err != nil {
			return 0, err
		}
		for _, d := range page.Runs {
			if !strings.HasPrefix(d.ID, prefix) {
				continue
			}
			ok, err := count(d)
			if err != nil {
				return 0, err
			}
			if ok {
				n++
			}
		}
		if page.Next == "" {
			return n, nil
		}
		q.PageToken = page.Next
	}
}

// stageLatency is what the server answers and burns with a number of runs queued.
type stageLatency struct {
	queued            int
	list, show        []float64 // ms
	server, apiserver float64   // % of a core
}

// measureStage samples the server's and the API server's CPU over o.Window, then times
// o.Requests job lists and shows of the run show.
func measureStage(ctx context.Context, w *Workspace, c *api.Client, k *KubeCluster, show string, queued int, o KubeOptions) (stageLatency, error) {
	l := stageLatency{queued: queued}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(k.Kubeconfig), "run", "kube-apiserver.pid"))
	if err != nil {
		return l, fmt.Errorf("the API server's pid: %w", err)
	}
	var apiPid int
	if _, err := fmt.Sscan(string(b), &apiPid); err != nil {
		return l, fmt.Errorf("the API server's pid: %w", err)
	}
	cpu, err := cpuOf([]int{w.server.Process.Pid, apiPid}, o.Window)
	if err != nil {
		return l, err
	}
	l.server, l.apiserver = cpu[0], cpu[1]
	l.list, l.show, err = apiLatency(ctx, c, show, o.Requests)
	return l, err
}

// cpuOf samples the CPU of several processes over the same window, in % of a core.
func cpuOf(pids []int, window time.Duration) ([]float64, error) {
	t0 := make([]int64, len(pids))
	for i, p := range pids {
		var err error
		if t0[i], err = cpuTicks(p); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	time.Sleep(window)
	out := make([]float64, len(pids))
	for i, p := range pids {
		t1, err := cpuTicks(p)
		if err != nil {
			return nil, err
		}
		const ticksPerSecond = 100 // USER_HZ on Linux
		out[i] = float64(t1-t0[i]) / ticksPerSecond / time.Since(start).Seconds() * 100
	}
	return out, nil
}

// stageFigures are the latency (p50, p99) and CPU figures of each stage against a baseline
// stage: for `job show` and CPU the first (1 run queued); for the list the first with 50 runs
// (or all there are), whose answer is as long as with more queued, so that the ratio is what the
// queue's length costs.
func stageFigures(ls []stageLatency) (latency, cpu []Figure) {
	listBase := 0
	for i, l := range ls {
		if l.queued <= 50 {
			listBase = i
		}
	}
	cases := []struct {
		name string
		base int
		of   func(stageLatency) []float64
	}{
		{"`job list` (GET /api/jobs, newest 50)", listBase, func(l stageLatency) []float64 { return l.list }},
		{"`job show` (GET /api/jobs/<id>) of a queued run", 0, func(l stageLatency) []float64 { return l.show }},
	}
	for _, cs := range cases {
		for _, q := range []struct {
			label string
			q     float64
		}{{"p50", 0.5}, {"p99", 0.99}} {
			latency = append(latency, versus(ls, cs.base, func(l stageLatency) Figure {
				return Figure{Name: fmt.Sprintf("%s, %d queued: %s", cs.name, l.queued, q.label), Value: quantile(cs.of(l), q.q), Unit: "ms"}
			})...)
		}
	}
	cpu = versus(ls, 0, func(l stageLatency) Figure {
		return Figure{Name: fmt.Sprintf("hangar server CPU, %d run(s) Pending in Kubernetes", l.queued), Value: l.server, Unit: "% of a core"}
	})
	return latency, append(cpu, versus(ls, 0, func(l stageLatency) Figure {
		return Figure{Name: fmt.Sprintf("kube-apiserver CPU, %d run(s) Pending in Kubernetes", l.queued), Value: l.apiserver, Unit: "% of a core"}
	})...)
}

// versus is one figure per stage, those after stage base against it.
func versus(ls []stageLatency, base int, fig func(stageLatency) Figure) []Figure {
	out := make([]Figure, len(ls))
	for i, l := range ls {
		out[i] = fig(l)
		if i > base {
			out[i] = against(out[base], out[i].Name, out[i].Value, out[i].Unit, nil)
		}
	}
	return out
}

// checkShown runs `hangar job show` of every run, 4 at a time, and counts those whose output
// names the scheduler's reason; it names on stderr the first few that do not.
func checkShown(ctx context.Context, w *Workspace, names []string) (int, error) {
	var shown, missing atomic.Int64
	err := parallel(len(names), 4, func(i int) error {
		out, err := w.Output(ctx, "job", "show", names[i])
		if err != nil {
			return err
		}
		if strings.Contains(out, gpuReason) {
			shown.Add(1)
		} else if missing.Add(1) <= 3 {
			fmt.Fprintf(os.Stderr, "kubernetes: `hangar job show %s` does not name %q:\n%s\n", names[i], gpuReason, out)
		}
		return nil
	})
	return int(shown.Load()), err
}

// cancelKube cancels every run through the API, 8 at a time, and times until all calls were
// answered, until all runs are Canceled and until the cluster holds nothing of theirs (against
// the plain Jobs' deletion, deleted).
func cancelKube(ctx context.Context, c *api.Client, k *KubeCluster, names []string, prefix string, deleted Figure) ([]Figure, error) {
	start := time.Now()
	if err := parallel(len(names), 8, func(i int) error { _, err := c.Jobs.Cancel(ctx, names[i]); return err }); err != nil {
		return nil, err
	}
	answered := time.Since(start)
	canceled, err := waitUntil(ctx, start, "every run is Canceled", func() (int, bool, error) {
		n, err := countRuns(ctx, c, prefix, func(d api.RunDetail) (bool, error) {
			if d.Status.Terminal() && d.Status != job.Canceled {
				return false, fmt.Errorf("run %s: %s (%s), not Canceled", d.ID, d.Status, d.StatusReason)
			}
			return d.Status == job.Canceled, nil
		})
		return n, n == len(names), err
	})
	if err != nil {
		return nil, err
	}
	clean, err := waitUntil(ctx, start, "the cluster holds no Job, Secret or pod of the canceled runs", func() (int, bool, error) {
		n, err := k.leftovers(ctx, prefix)
		return n, n == 0, err
	})
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("cancel of the %d runs (API, 8 clients)", len(names))
	return []Figure{
		{Name: what + ": every call answered", Value: answered.Seconds(), Unit: "s"},
		{Name: what + ": every run Canceled", Value: canceled.Seconds(), Unit: "s"},
		deleted,
		against(deleted, what+": no Job, Secret or pod of theirs left (label "+labelManagedBy+"=hangar)", clean.Seconds(), "s", nil),
	}, nil
}

// leftovers counts the Jobs, Secrets and pods Hangar made for runs named prefix* that are
// still in the cluster.
func (k *KubeCluster) leftovers(ctx context.Context, prefix string) (int, error) {
	sel := metav1.ListOptions{LabelSelector: labelManagedBy + "=hangar"}
	var metas []metav1.ObjectMeta
	jobs, err := k.cs.BatchV1().Jobs(kubeNamespace).List(ctx, sel)
	if err != nil {
		return 0, err
	}
	for _, o := range jobs.Items {
		metas = append(metas, o.ObjectMeta)
	}
	secrets, err := k.cs.CoreV1().Secrets(kubeNamespace).List(ctx, sel)
	if err != nil {
		return 0, err
	}
	for _, o := range secrets.Items {
		metas = append(metas, o.ObjectMeta)
	}
	pods, err := k.cs.CoreV1().Pods(kubeNamespace).List(ctx, sel)
	if err != nil {
		return 0, err
	}
	for _, o := range pods.Items {
		metas = append(metas, o.ObjectMeta)
	}
	n := 0
	for _, m := range metas {
		if strings.HasPrefix(m.Labels[labelRun], prefix) {
			n++
		}
	}
	return n, nil
}
