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
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
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

// plainJob is the baseline's Job as a user would write it: what Hangar's pod has that matters
// to the user (image, node selector, toleration, host network), running cmd directly, and
// Kubernetes' defaults otherwise (the service account's token mounted).
func plainJob(name, tag string, gpu bool, cmd ...string) *batchv1.Job {
	labels := map[string]string{labelPlain: tag}
	c := corev1.Container{Name: "run", Image: kubeImage, ImagePullPolicy: corev1.PullIfNotPresent, Command: cmd}
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c}, HostNetwork: true,
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

// withoutVolumes leaves a plain Job's pod without any volume (no service account token), as
// Hangar's pod is but for its own volumes: the kubelet then starts the container without waiting
// for mounts.
func withoutVolumes(j *batchv1.Job) {
	j.Spec.Template.Spec.AutomountServiceAccountToken = new(false)
	j.Spec.Template.Spec.EnableServiceLinks = new(false)
}

// withHangarVolumes gives a plain Job the volumes of Hangar's pod instead: a Secret (the
// supervisor's config), two emptyDirs (the run's directory, the cache) and the supervisor's
// hostPath.
func withHangarVolumes(j *batchv1.Job, secret, hostDir string) {
	withoutVolumes(j)
	spec := &j.Spec.Template.Spec
	spec.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: new(int32(0o400))}}},
		{Name: "runs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "bin", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: new(corev1.HostPathDirectory)}}},
	}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "config", MountPath: "/hangar/config", ReadOnly: true}, {Name: "runs", MountPath: "/hangar/runs"},
		{Name: "cache", MountPath: "/hangar/cache"}, {Name: "bin", MountPath: "/hangar/bin", ReadOnly: true},
	}
}

// plainSecret creates the Secret the plain Jobs with Hangar's volumes mount.
func (k *KubeCluster) plainSecret(ctx context.Context, tag string) (string, error) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tag + "-config", Namespace: kubeNamespace, Labels: map[string]string{labelPlain: tag}},
		Data: map[string][]byte{"supervisor.json": []byte("{}")}}
	if _, err := k.cs.CoreV1().Secrets(kubeNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create the plain Jobs' Secret: %w", err)
	}
	return s.Name, nil
}

// sweep removes what this invocation left in the cluster (after an error, or a Job a canceled
// run's finalizer still holds once its server is gone): the plain Jobs tagged with tag and Hangar's
// Jobs of runs named tag-*.
func (k *KubeCluster) sweep(ctx context.Context, tag string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	jobs := k.cs.BatchV1().Jobs(kubeNamespace)
	bg := metav1.DeletePropagationBackground
	plain := metav1.ListOptions{LabelSelector: labelPlain + "=" + tag}
	_ = jobs.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, plain)
	_ = k.cs.CoreV1().Secrets(kubeNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, plain)
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

// LoadAverage is the machine's 1, 5 and 15-minute load averages (from /proc/loadavg), for the
// machine state a table is taken in.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
