package bench

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// Names of the test cluster of scripts/setup/kubernetes.sh and of what Hangar puts in it
// (internal/backend/kubernetes; repeated here so the benchmarks stay a client of the product).
const (
	kubeNamespace   = "hangar-test"
	kubeTarget      = "bench-kube"
	kubeImage       = "localhost/hangar-python:latest"
	labelManagedBy  = "app.kubernetes.io/managed-by"
	labelRun        = "hangar.dev/run"
	labelJobName    = "batch.kubernetes.io/job-name"
	labelPlain      = "hangar-bench/plain"
	finalizerResult = "hangar.dev/result"
	// gpuReason is what the scheduler says of a GPU pod on the test cluster (kwok nodes have no
	// GPUs; the real node's taint keeps it away).
	gpuReason = "Insufficient nvidia.com/gpu"
)

// KubeCluster is the test cluster of scripts/setup/kubernetes.sh (started when it is not
// running): a real kubelet on containerd and two kwok nodes.
type KubeCluster struct {
	Kubeconfig string
	Kubectl    string
	cs         *k8s.Clientset
}

// StartKube runs the project's setup script, which starts the cluster when needed and prints its
// admin kubeconfig, and finds kubectl.
func StartKube(ctx context.Context, repo string) (*KubeCluster, error) {
	out, msgs, err := script(ctx, filepath.Join(repo, "scripts/setup/kubernetes.sh"))
	if err != nil {
		return nil, fmt.Errorf("start kubernetes: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	kc := &KubeCluster{Kubeconfig: lines[len(lines)-1]}
	if kc.Kubeconfig == "" {
		return nil, fmt.Errorf("scripts/setup/kubernetes.sh started no cluster: %s", msgs)
	}
	bin, _, err := script(ctx, filepath.Join(repo, "scripts/setup/k8s-build.sh"), "--check")
	if err != nil {
		return nil, fmt.Errorf("find kubectl: %w", err)
	}
	kc.Kubectl = filepath.Join(strings.TrimSpace(bin), "kubectl")
	cfg, err := clientcmd.BuildConfigFromFlags("", kc.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kc.Kubeconfig, err)
	}
	// The baseline is what the cluster takes, not client-go's default throttle (5 requests/s).
	cfg.QPS, cfg.Burst, cfg.Timeout = 1000, 1000, 30*time.Second
	if kc.cs, err = k8s.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kc.Kubeconfig, err)
	}
	return kc, nil
}

// script runs a bash script and returns its stdout and its messages (stderr).
func script(ctx context.Context, path string, args ...string) (out, msgs string, err error) {
	var errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{path}, args...)...)
	cmd.Stderr = &errb
	b, err := cmd.Output()
	msgs = strings.TrimSpace(errb.String())
	if err != nil {
		return "", msgs, fmt.Errorf("%s: %w: %s", path, err, msgs)
	}
	return string(b), msgs, nil
}

// SupervisorDir is a directory holding a statically linked hangar for the pods (mounted from
// this machine, host_path): bin's own directory when bin is one (and is named hangar), else a
// build of the repository into dir.
func SupervisorDir(ctx context.Context, bin, repo, dir string) (string, error) {
	if filepath.Base(bin) == "hangar" && static(bin) {
		return filepath.Abs(filepath.Dir(bin))
	}
	out := filepath.Join(dir, "kube-supervisor")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(out, "hangar"), "./cmd/hangar")
	cmd.Dir, cmd.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build a static hangar for the pods: %w: %s", err, b)
	}
	return out, os.Chmod(out, 0o755)
}

// static reports whether an executable needs no dynamic loader (the image has no glibc).
func static(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// kubeComputeYAML is the compute file of the benchmarks (the one BENCHMARKS.md shows): the
// default instance type puts pods on the real kubelet; gpu fits nowhere.
func (k *KubeCluster) kubeComputeYAML(supervisor string) string {
	return fmt.Sprintf(`name: %s
type: kubernetes
kubeconfig: %s
namespace: %s
default_image: %s
host_network: true
supervisor:
  host_path: %s
default_instance_type: real
instance_types:
  real:
    node_selector: {hangar.test/kind: real}
    tolerations: [{key: hangar.test/real, operator: Exists, effect: NoSchedule}]
  gpu:
    requests: {nvidia.com/gpu: 1}
    limits: {nvidia.com/gpu: 1}
`, kubeTarget, yamlString(k.Kubeconfig), kubeNamespace, kubeImage, yamlString(supervisor))
}

// yamlString quotes s for YAML (a JSON string is one), so a path with odd characters stays a path.
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// attach attaches the Kubernetes target to the workspace through the CLI, as a user would.
func (k *KubeCluster) attach(ctx context.Context, w *Workspace, dir, supervisor string) error {
	file := filepath.Join(dir, "kube.yml")
	if err := os.WriteFile(file, []byte(k.kubeComputeYAML(supervisor)), 0o644); err != nil {
		return err
	}
	_, err := w.Run(ctx, "compute", "attach", "-f", file)
	return err
}

// KubeOptions size the Kubernetes benchmarks.
type KubeOptions struct {
	N        int           // one-pod jobs per side, interleaved
	Queued   int           // jobs left Pending on the gpu instance type
	Requests int           // API requests per latency case
	Window   time.Duration // how long CPU is sampled at each queue length
	// Supervisor is a directory holding a static hangar for the pods.
	Supervisor string
}

// stamp makes this invocation's names unique: a finished Job stays in the cluster for minutes,
// and another workspace's run of the same name would find it.
func stamp() string { return "bk" + time.Now().Format("150405") }

// plainJob is the baseline's Job: what Hangar's pod has that a user would write (image, node
// selector, toleration, host network, no service account token), running cmd directly.
func plainJob(name, tag string, gpu bool, cmd ...string) *batchv1.Job {
	labels := map[string]string{labelPlain: tag}
	c := corev1.Container{Name: "run", Image: kubeImage, ImagePullPolicy: corev1.PullIfNotPresent, Command: cmd}
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
		HostNetwork: true, AutomountServiceAccountToken: new(false), EnableServiceLinks: new(false),
		NodeSelector: map[string]string{"hangar.test/kind": "real"},
		Tolerations:  []corev1.Toleration{{Key: "hangar.test/real", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
	if gpu {
		gpus := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpus, Limits: gpus}
		spec.NodeSelector, spec.Tolerations = nil, nil
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kubeNamespace, Labels: labels},
		Spec: batchv1.JobSpec{BackoffLimit: new(int32(0)), TTLSecondsAfterFinished: new(int32(60)),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}
}

// sweep removes what this invocation left in the cluster (after an error, or a Job a canceled
// run's finalizer still holds once its server is gone): the plain Jobs tagged with tag and Hangar's
// Jobs of runs named tag-*.
func (k *KubeCluster) sweep(ctx context.Context, tag string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	jobs := k.cs.BatchV1().Jobs(kubeNamespace)
	bg := metav1.DeletePropagationBackground
	_ = jobs.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, metav1.ListOptions{LabelSelector: labelPlain + "=" + tag})
	list, err := jobs.List(ctx, metav1.ListOptions{LabelSelector: labelManagedBy + "=hangar"})
	if err != nil {
		return
	}
	for _, j := range list.Items {
		if !strings.HasPrefix(j.Labels[labelRun], tag+"-") {
			continue
		}
		if len(j.Finalizers) > 0 {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			_, _ = jobs.Patch(ctx, j.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		}
		_ = jobs.Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	}
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
// 20 ms); also to the end (Completed, the pod Succeeded). steps says where the time goes: the
// milestones of each submission (the run's events, and what a watch of the namespace saw), p50
// since the submission.
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
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	seen := k.watch(wctx)
	jobFile := filepath.Join(dir, "kube-sleep.yml")
	if err := os.WriteFile(jobFile, []byte("command: sleep 2\ncompute: "+kubeTarget+"\n"), 0o644); err != nil {
		return nil, nil, err
	}
	hangarOne := func(name string) (time.Duration, time.Duration, marks, error) {
		return kubeHangarOne(ctx, w, c, seen, jobFile, name)
	}
	plainOne := func(name string) (time.Duration, time.Duration, marks, error) {
		return k.plainOne(ctx, seen, dir, tag, name)
	}
	// The first pod of each kind warms the node (containerd's image and snapshot caches).
	if _, _, _, err := plainOne(tag + "-warm"); err != nil {
		return nil, nil, err
	}
	if _, _, _, err := hangarOne(tag + "-warm"); err != nil {
		return nil, nil, err
	}
	var pRun, pDone, hRun, hDone []float64
	var pMarks, hMarks []marks
	for i := 0; i < o.N; i++ {
		r, d, m, err := plainOne(fmt.Sprintf("%s-plain-%d", tag, i))
		if err != nil {
			return nil, nil, err
		}
		pRun, pDone, pMarks = append(pRun, msOf(r)), append(pDone, msOf(d)), append(pMarks, m)
		if r, d, m, err = hangarOne(fmt.Sprintf("%s-lat-%d", tag, i)); err != nil {
			return nil, nil, err
		}
		hRun, hDone, hMarks = append(hRun, msOf(r)), append(hDone, msOf(d)), append(hMarks, m)
	}
	figs = quantilePair("`kubectl create -f` of the plain Job: submit → pod Running", pRun,
		"`hangar job create`: submit → Running", hRun)
	figs = append(figs, quantilePair("`kubectl create -f`: submit → pod Succeeded", pDone,
		"`hangar job create`: submit → Completed", hDone)...)
	steps = append(milestones("`kubectl create -f`: ", pMarks), milestones("`hangar job create`: ", hMarks)...)
	return figs, steps, nil
}

// kubeHangarOne submits one job through the CLI and polls the API until it ends.
func kubeHangarOne(ctx context.Context, w *Workspace, c *api.Client, seen *sightings, jobFile, name string) (time.Duration, time.Duration, marks, error) {
	start := time.Now()
	if _, err := w.Run(ctx, "job", "create", "-f", jobFile, "--name", name); err != nil {
		return 0, 0, nil, err
	}
	run, done, err := pollUntil(ctx, start, func() (bool, bool, error) {
		d, err := c.GetJob(ctx, name)
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
	d, err := c.GetJob(ctx, name)
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

// plainOne creates the plain Job with kubectl and polls its pod until it ends.
func (k *KubeCluster) plainOne(ctx context.Context, seen *sightings, dir, tag, name string) (time.Duration, time.Duration, marks, error) {
	file := filepath.Join(dir, name+".json")
	b, err := json.Marshal(plainJob(name, tag, false, "sleep", "2"))
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

// quantilePair is a baseline's p50 and p90 (in ms, the p50 with every sample) and the same of
// a case measured against it.
func quantilePair(base string, b []float64, name string, h []float64) []Figure {
	b50 := Figure{Name: base + ", p50", Value: quantile(b, 0.5), Unit: "ms", Samples: b}
	b90 := Figure{Name: base + ", p90", Value: quantile(b, 0.9), Unit: "ms"}
	return []Figure{b50, b90,
		against(b50, name+", p50", quantile(h, 0.5), "ms", h),
		against(b90, name+", p90", quantile(h, 0.9), "ms", nil)}
}

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
	res.Queue = append(res.Queue, Figure{Name: "`hangar job show` of each queued run names the scheduler's reason (" + gpuReason + ")",
		Value: float64(shown), Unit: fmt.Sprintf("of %d runs", len(names))})
	cancels, err := cancelKube(ctx, c, k, names, prefix)
	res.Queue = append(res.Queue, cancels...)
	return res, err
}

// queueBase is the baseline of the queued-jobs benchmark: rates of plain Jobs.
type queueBase struct{ created, pending Figure }

// plainQueue creates n plain Jobs that fit no node (a GPU each) through the Kubernetes API, 8 at
// a time, times until all are created and until every pod is Unschedulable, then deletes them
// and waits until they are gone, so that the scheduler's queue is Hangar's alone afterwards.
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
	if err := jobs.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, sel); err != nil {
		return queueBase{}, fmt.Errorf("delete the plain Jobs: %w", err)
	}
	if _, err := waitUntil(ctx, time.Now(), "the plain Jobs and pods are gone", func() (int, bool, error) {
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
	}); err != nil {
		return queueBase{}, err
	}
	what := fmt.Sprintf("%d plain Jobs through the Kubernetes API, 8 clients", n)
	return queueBase{created: rate(Figure{}, what+": all created", n, created),
		pending: rate(Figure{}, what+": all pods Unschedulable", n, pending)}, nil
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

// waitUntil polls check every 250 ms for up to 30 minutes and returns the time since start when
// it said done; every 30 s it says on stderr how far it got.
func waitUntil(ctx context.Context, start time.Time, what string, check func() (n int, done bool, err error)) (time.Duration, error) {
	said := time.Now()
	for deadline := time.Now().Add(30 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		n, done, err := check()
		if err != nil {
			return 0, fmt.Errorf("wait until %s: %w", what, err)
		}
		if done {
			return time.Since(start), nil
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
		_, err := c.CreateJob(ctx, api.CreateJobRequest{Spec: sp})
		return err
	})
}

// countRuns counts the runs whose name has prefix that count says yes to, over every page of
// the job list.
func countRuns(ctx context.Context, c *api.Client, prefix string, count func(api.RunDetail) (bool, error)) (int, error) {
	q := api.JobListQuery{Query: prefix, Limit: 1000}
	n := 0
	for {
		page, err := c.ListJobsPage(ctx, q)
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

// stageFigures are the latency (p50, p99) and CPU figures of each stage against the first.
func stageFigures(ls []stageLatency) (latency, cpu []Figure) {
	if len(ls) == 0 {
		return nil, nil
	}
	cases := []struct {
		name string
		of   func(stageLatency) []float64
	}{
		{"`job list` (GET /api/jobs, newest 50)", func(l stageLatency) []float64 { return l.list }},
		{"`job show` (GET /api/jobs/<id>) of a queued run", func(l stageLatency) []float64 { return l.show }},
	}
	for _, cs := range cases {
		for _, q := range []struct {
			label string
			q     float64
		}{{"p50", 0.5}, {"p99", 0.99}} {
			b := Figure{Name: fmt.Sprintf("%s, %d queued: %s", cs.name, ls[0].queued, q.label), Value: quantile(cs.of(ls[0]), q.q), Unit: "ms"}
			latency = append(latency, b)
			for _, l := range ls[1:] {
				latency = append(latency, against(b, fmt.Sprintf("%s, %d queued: %s", cs.name, l.queued, q.label), quantile(cs.of(l), q.q), "ms", nil))
			}
		}
	}
	for _, who := range []struct {
		name string
		of   func(stageLatency) float64
	}{{"hangar server", func(l stageLatency) float64 { return l.server }}, {"kube-apiserver", func(l stageLatency) float64 { return l.apiserver }}} {
		b := Figure{Name: fmt.Sprintf("%s CPU, %d run(s) Pending in Kubernetes", who.name, ls[0].queued), Value: who.of(ls[0]), Unit: "% of a core"}
		cpu = append(cpu, b)
		for _, l := range ls[1:] {
			cpu = append(cpu, against(b, fmt.Sprintf("%s CPU, %d runs Pending in Kubernetes", who.name, l.queued), who.of(l), "% of a core", nil))
		}
	}
	return latency, cpu
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
// answered, until all runs are Canceled and until the cluster holds nothing of theirs.
func cancelKube(ctx context.Context, c *api.Client, k *KubeCluster, names []string, prefix string) ([]Figure, error) {
	start := time.Now()
	if err := parallel(len(names), 8, func(i int) error { _, err := c.CancelJob(ctx, names[i]); return err }); err != nil {
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
		{Name: what + ": no Job, Secret or pod of theirs left (label " + labelManagedBy + "=hangar)", Value: clean.Seconds(), Unit: "s"},
	}, nil
}
