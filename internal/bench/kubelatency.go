package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// sighting is when this process first saw each step of a Job's life in the cluster.
type sighting struct{ job, pod, scheduled, running time.Time }

// sightings follow the namespace's Jobs and pods (two watches) and stamp each step as it
// arrives, keyed by a run's label for Hangar's objects and by the Job's name for the others.
type sightings struct {
	mu sync.Mutex
	m  map[string]*sighting
}

func (k *KubeCluster) watch(ctx context.Context) *sightings {
	s := &sightings{m: map[string]*sighting{}}
	go follow(ctx, func() (watch.Interface, error) {
		return k.cs.BatchV1().Jobs(kubeNamespace).Watch(ctx, metav1.ListOptions{})
	}, s.see)
	go follow(ctx, func() (watch.Interface, error) {
		return k.cs.CoreV1().Pods(kubeNamespace).Watch(ctx, metav1.ListOptions{})
	}, s.see)
	return s
}

// follow reopens a watch the API server closed, until ctx ends.
func follow(ctx context.Context, open func() (watch.Interface, error), see func(any, time.Time)) {
	for ctx.Err() == nil {
		wi, err := open()
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range wi.ResultChan() {
			see(ev.Object, time.Now())
		}
		wi.Stop()
	}
}

func (s *sightings) see(obj any, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch o := obj.(type) {
	case *batchv1.Job:
		stampOnce(&s.at(sightingKey(o.ObjectMeta, o.Name)).job, at)
	case *corev1.Pod:
		g := s.at(sightingKey(o.ObjectMeta, o.Labels[labelJobName]))
		stampOnce(&g.pod, at)
		if o.Spec.NodeName != "" {
			stampOnce(&g.scheduled, at)
		}
		if o.Status.Phase != corev1.PodPending && o.Status.Phase != "" {
			stampOnce(&g.running, at)
		}
	}
}

func (s *sightings) at(key string) *sighting {
	if s.m[key] == nil {
		s.m[key] = &sighting{}
	}
	return s.m[key]
}

// get waits (up to 5 s: a watch may lag the poll that saw the pod Running) for the sighting of
// key to reach the pod's start, and returns what it has.
func (s *sightings) get(key string) sighting {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		g := s.m[key]
		var out sighting
		if g != nil {
			out = *g
		}
		s.mu.Unlock()
		if !out.running.IsZero() || time.Now().After(deadline) {
			return out
		}
	}
}

func sightingKey(m metav1.ObjectMeta, jobName string) string {
	if r := m.Labels[labelRun]; r != "" {
		return "run:" + r
	}
	return "job:" + jobName
}

func stampOnce(t *time.Time, at time.Time) {
	if t.IsZero() {
		*t = at
	}
}

// marks are the milestones of one submission, as times since it began.
type marks map[string]time.Duration

// since adds the milestone name at t, when t is known.
func (m marks) since(name string, start, t time.Time) {
	if !t.IsZero() {
		m[name] = t.Sub(start)
	}
}

// cluster adds what the watch saw of a Job's life.
func (m marks) cluster(start time.Time, g sighting) {
	m.since("Job in the cluster", start, g.job)
	m.since("pod created", start, g.pod)
	m.since("pod scheduled", start, g.scheduled)
	m.since("pod Running (the kubelet's status)", start, g.running)
}

// firstEvent is when a run first entered state s (zero when it never did).
func firstEvent(evs []job.Event, s job.State) time.Time {
	for _, e := range evs {
		if e.To == s {
			return e.Time
		}
	}
	return time.Time{}
}

// KubeLatency compares a one-pod job (`sleep 2`) on the real kubelet through Hangar (`hangar job
// create`, Running as the API reports it) with `kubectl create -f` of the same plain Job (its
// pod's phase Running), n times each, interleaved, both watched the same way (a poll every
// 20 ms); also to the end (Completed, the pod Succeeded). Two more sides show what volumes cost
// the kubelet (it waits for mounts in 300 ms polls): the plain Job without any volume (no service
// account token), and with the volumes of Hangar's pod instead (its config Secret, two emptyDirs,
// the supervisor's hostPath). steps says where the time goes: the milestones of each
// submission (the run's events, and what a watch of the namespace saw), p50 since submission.
func KubeLatency(ctx context.Context, w *Workspace, k *KubeCluster, dir string, o KubeOptions) (figs, steps []Figure, err error) {
	if err := k.attach(ctx, w, dir, o.Supervisor); err != nil {
		return nil, nil, err
	}
	c, err := w.client()
	if err != nil {
		return nil, nil, err
	}
	tag := stamp()
	defer k.sweep(ctx, tag)
	secret, err := k.plainSecret(ctx, tag)
	if err != nil {
		return nil, nil, err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	seen := k.watch(wctx)
	jobFile := filepath.Join(dir, "kube-sleep.yml")
	if err := os.WriteFile(jobFile, []byte("command: sleep 2\ncompute: "+kubeTarget+"\n"), 0o644); err != nil {
		return nil, nil, err
	}
	plain := func(change func(*batchv1.Job)) func(string) (time.Duration, time.Duration, marks, error) {
		return func(name string) (time.Duration, time.Duration, marks, error) {
			j := plainJob(name, tag, false, "sleep", "2")
			change(j)
			return k.plainOne(ctx, seen, dir, j)
		}
	}
	sides := []*kubeSide{
		{label: "`kubectl create -f`, plain Job", running: "pod Running", done: "pod Succeeded", one: plain(func(*batchv1.Job) {})},
		{label: "`kubectl create -f`, plain Job, no volume", running: "pod Running", done: "pod Succeeded", one: plain(withoutVolumes)},
		{label: "`kubectl create -f`, plain Job, Hangar's 4 volumes", running: "pod Running", done: "pod Succeeded",
			one: plain(func(j *batchv1.Job) { withHangarVolumes(j, secret, o.Supervisor) })},
		{label: "`hangar job create`", running: "Running", done: "Completed", one: func(name string) (time.Duration, time.Duration, marks, error) {
			return kubeHangarOne(ctx, w, c, seen, jobFile, name)
		}},
	}
	// The first pod of each kind warms the node (containerd's image and snapshot caches).
	for i, sd := range sides {
		if _, _, _, err := sd.one(fmt.Sprintf("%s-warm-%d", tag, i)); err != nil {
			return nil, nil, err
		}
	}
	for i := 0; i < o.N; i++ {
		for j, sd := range sides {
			r, d, m, err := sd.one(fmt.Sprintf("%s-%d-%d", tag, j, i))
			if err != nil {
				return nil, nil, err
			}
			sd.run, sd.end, sd.marks = append(sd.run, msOf(r)), append(sd.end, msOf(d)), append(sd.marks, m)
		}
	}
	figs = append(quantileRows(sides, func(sd *kubeSide) (string, []float64) { return sd.running, sd.run }),
		quantileRows(sides, func(sd *kubeSide) (string, []float64) { return sd.done, sd.end })...)
	for _, sd := range sides {
		steps = append(steps, milestones(sd.label+": ", sd.marks)...)
	}
	return figs, steps, nil
}

// kubeSide is one way of running the one-pod job, and what it measured.
type kubeSide struct {
	label, running, done string
	one                  func(name string) (run, done time.Duration, m marks, err error)
	run, end             []float64 // ms
	marks                []marks
}

// quantileRows are the p50 (with every sample) and p90 of one measure of each side, the first
// side the baseline.
func quantileRows(sides []*kubeSide, of func(*kubeSide) (string, []float64)) []Figure {
	var out []Figure
	for _, q := range []struct {
		label string
		q     float64
	}{{"p50", 0.5}, {"p90", 0.9}} {
		var base Figure
		for i, sd := range sides {
			what, vs := of(sd)
			f := Figure{Name: fmt.Sprintf("%s: submit → %s, %s", sd.label, what, q.label), Value: quantile(vs, q.q), Unit: "ms"}
			if q.q == 0.5 {
				f.Samples = vs
			}
			if i == 0 {
				base = f
			} else {
				f = against(base, f.Name, f.Value, f.Unit, f.Samples)
			}
			out = append(out, f)
		}
	}
	return out
}

// kubeHangarOne submits one job through the CLI and polls the API until it ends.
func kubeHangarOne(ctx context.Context, w *Workspace, c *api.Client, seen *sightings, jobFile, name string) (time.Duration, time.Duration, marks, error) {
	start := time.Now()
	if _, err := w.Run(ctx, "job", "create", "-f", jobFile, "--name", name); err != nil {
		return 0, 0, nil, err
	}
	run, done, err := pollUntil(ctx, start, func() (bool, bool, error) {
		d, err := c.Jobs.Get(ctx, name)
		if err != nil {
			return false, false, err
		}
		if d.Status.Terminal() && d.Status != job.Completed {
			return false, false, fmt.Errorf("run %s: %s (%s)", name, d.Status, d.StatusReason)
		}
		return d.Status == job.Running || d.Status == job.Finalizing || d.Status.Terminal(), d.Status.Terminal(), nil
	})
	if err != nil {
		return 0, 0, nil, err
	}
	d, err := c.Jobs.Get(ctx, name)
	if err != nil {
		return 0, 0, nil, err
	}
	m := marks{}
	m.since("run Queued (the API answered)", start, firstEvent(d.Events, job.Queued))
	m.cluster(start, seen.get("run:"+name))
	m.since("supervisor reported Preparing", start, firstEvent(d.Events, job.Preparing))
	m.since("supervisor reported Running", start, firstEvent(d.Events, job.Running))
	m["Running seen by the poll"] = run
	return run, done, m, nil
}

// plainOne creates a plain Job with kubectl and polls its pod until it ends.
func (k *KubeCluster) plainOne(ctx context.Context, seen *sightings, dir string, j *batchv1.Job) (time.Duration, time.Duration, marks, error) {
	name := j.Name
	file := filepath.Join(dir, name+".json")
	b, err := json.Marshal(j)
	if err != nil {
		return 0, 0, nil, err
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return 0, 0, nil, err
	}
	start := time.Now()
	if err := k.kubectl(ctx, "create", "-f", file); err != nil {
		return 0, 0, nil, err
	}
	pods := k.cs.CoreV1().Pods(kubeNamespace)
	run, done, err := pollUntil(ctx, start, func() (bool, bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: labelJobName + "=" + name})
		if err != nil || len(list.Items) == 0 {
			return false, false, err
		}
		switch p := list.Items[0]; p.Status.Phase {
		case corev1.PodRunning:
			return true, false, nil
		case corev1.PodSucceeded:
			return true, true, nil
		case corev1.PodFailed:
			return false, false, fmt.Errorf("pod %s failed: %s", p.Name, p.Status.Message)
		}
		return false, false, nil
	})
	if err != nil {
		return 0, 0, nil, err
	}
	m := marks{}
	m.cluster(start, seen.get("job:"+name))
	m["Running seen by the poll"] = run
	return run, done, m, nil
}

// kubectl runs kubectl against the cluster.
func (k *KubeCluster) kubectl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, k.Kubectl, append([]string{"--kubeconfig", k.Kubeconfig}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// milestoneOrder is the order of a submission's milestones in a table.
var milestoneOrder = []string{"run Queued (the API answered)", "Job in the cluster", "pod created", "pod scheduled",
	"pod Running (the kubelet's status)", "supervisor reported Preparing", "supervisor reported Running", "Running seen by the poll"}

// milestones are the p50 (and p90, as the samples) of each milestone some submissions reached.
func milestones(prefix string, ms []marks) []Figure {
	var out []Figure
	for _, name := range milestoneOrder {
		var vs []float64
		for _, m := range ms {
			if d, ok := m[name]; ok {
				vs = append(vs, msOf(d))
			}
		}
		if len(vs) > 0 {
			out = append(out, Figure{Name: prefix + name + " (p50; p90)", Value: quantile(vs, 0.5), Unit: "ms",
				Samples: []float64{quantile(vs, 0.9)}})
		}
	}
	return out
}
