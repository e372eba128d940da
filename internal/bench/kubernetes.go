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
	"strconv"
	"strings"
	"sync"
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
	out, err := script(ctx, filepath.Join(repo, "scripts/setup/kubernetes.sh"))
	if err != nil {
		return nil, fmt.Errorf("start kubernetes: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	kc := &KubeCluster{Kubeconfig: lines[len(lines)-1]}
	if kc.Kubeconfig == "" {
		return nil, fmt.Errorf("scripts/setup/kubernetes.sh started no cluster (run it to see why; HANGAR_K8S_BUILD=1 builds what is missing)")
	}
	bin, err := script(ctx, filepath.Join(repo, "scripts/setup/k8s-build.sh"), "--check")
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

// script runs a bash script and returns its stdout; its stderr comes with an error.
func script(ctx context.Context, path string, args ...string) (string, error) {
	var errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{path}, args...)...)
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", path, err, strings.TrimSpace(errb.String()))
	}
	return string(out), nil
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
