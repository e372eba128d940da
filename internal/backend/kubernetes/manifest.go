package kubernetes

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// Paths inside a Hangar pod.
const (
	configDir = "/hangar/config" // the Secret with supervisor.json (read-only)
	runsDir   = "/hangar/runs"   // emptyDir: the run's directory
	cacheDir  = "/hangar/cache"  // emptyDir: the blob and environment cache
	binDir    = "/hangar/bin"    // the hangar binary: copied by the init container, or a hostPath
	// imageBinary is where a supervisor image holds its static hangar binary.
	imageBinary   = "/usr/local/bin/hangar"
	containerName = "run"
	// keepFinished is how long a finished Job stays for people and for Status (seconds).
	keepFinished = 300
	// terminationGrace covers the supervisor's cancel: its command's grace, then uploading the
	// outputs and logs.
	terminationGrace = 120
)

// Run is what a run's objects are built from: the launch as the backend completed it.
type Run struct {
	RunID, Token string
	Attempt      int
	Spec         job.Spec
	Target       compute.KubernetesSpec
	// ServerURL is where the supervisors reach the workspace server.
	ServerURL string
	// ServerCA is the PEM the supervisors verify an https server with.
	ServerCA string
	// Workspace is the workspace's id ("" in tests of one workspace).
	Workspace string
}

// Objects are a run's objects in the cluster. The Secret and the Service are owned by the Job
// (SetOwner), so Kubernetes removes them with it.
type Objects struct {
	Job     *batchv1.Job
	Secret  *corev1.Secret
	Service *corev1.Service // nil for one node
}

// Build makes a run's objects; an error names the job spec's field that the target cannot run.
func Build(r Run) (Objects, error) {
	name := JobName(r.RunID, r.Attempt)
	nodes := max(r.Spec.Resources.InstanceCount, 1)
	if servesByEntrypoint(r) { // its pods are a Deployment's (BuildServing), never a Job's
		return Objects{}, fmt.Errorf("environment.inference_config: an image that serves by its own entrypoint runs as an online deployment's replica on Kubernetes, not as a job")
	}
	image, it, err := podPlacement(r)
	if err != nil {
		return Objects{}, err
	}
	cfg := api.SupervisorConfig{RunID: r.RunID, Token: r.Token, ServerURL: r.ServerURL, ServerCA: r.ServerCA,
		Dir: path.Join(runsDir, r.RunID), CacheDir: path.Join(cacheDir, "blobs"), InImage: image, Pod: true}
	if nodes > 1 {
		for i := range nodes {
			cfg.Nodes = append(cfg.Nodes, fmt.Sprintf("%s-%d.%s", name, i, name))
		}
	}
	cfgJSON, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return Objects{}, err
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: r.Target.Namespace, Labels: runLabels(r),
		Annotations: map[string]string{AnnotationRunID: r.RunID, AnnotationAttempt: strconv.Itoa(max(r.Attempt, 1))}}
	o := Objects{
		Job: &batchv1.Job{ObjectMeta: meta, Spec: jobSpec(r, name, nodes, image, it)},
		Secret: &corev1.Secret{ObjectMeta: *meta.DeepCopy(), Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"supervisor.json": cfgJSON}},
	}
	if r.Target.QueueName != "" { // Kueue admits it by unsuspending it, as Kueue's own examples create Jobs
		o.Job.Labels[LabelKueueQueue] = r.Target.QueueName
		o.Job.Spec.Suspend = new(true)
	}
	if nodes > 1 {
		o.Service = &corev1.Service{ObjectMeta: *meta.DeepCopy(), Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
			Selector: map[string]string{LabelJobName: name, LabelRun: RunLabel(r.RunID)},
		}}
	}
	return o, nil
}

// SetOwner makes the Job the owner of the run's other objects.
func (o Objects) SetOwner(j *batchv1.Job) {
	ref := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
		BlockOwnerDeletion: new(true)}
	o.Secret.OwnerReferences = []metav1.OwnerReference{ref}
	if o.Service != nil {
		o.Service.OwnerReferences = []metav1.OwnerReference{ref}
	}
}

// podMeta is the pods' labels and annotations: the target's, then Hangar's (which win).
func podMeta(r Run) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Labels: maps.Clone(r.Target.PodLabels), Annotations: maps.Clone(r.Target.PodAnnotations)}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	maps.Copy(m.Labels, runLabels(r))
	m.Annotations[AnnotationRunID] = r.RunID
	return m
}

func runLabels(r Run) map[string]string {
	l := map[string]string{LabelManagedBy: ManagedBy, LabelRun: RunLabel(r.RunID)}
	if r.Workspace != "" {
		l[LabelWorkspace] = r.Workspace
	}
	return l
}

// jobSpec is an Indexed Job of one pod per node. A pod replaced after a disruption (preemption,
// a drained node) starts only once the old one is gone (podReplacementPolicy Failed), so a rank
// never runs twice at once, and such a disruption does not count as a failure; any other failed
// pod fails the Job at once (Hangar, not Kubernetes, decides about retries).
func jobSpec(r Run, name string, nodes int, image string, it compute.InstanceType) batchv1.JobSpec {
	n := int32(nodes)
	mode := batchv1.IndexedCompletion
	repl := batchv1.Failed
	pod := podSpec(r, name, nodes, image, it)
	return batchv1.JobSpec{
		Completions: &n, Parallelism: &n, CompletionMode: &mode, BackoffLimit: new(int32(0)),
		PodReplacementPolicy: &repl, TTLSecondsAfterFinished: new(int32(keepFinished)),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
			{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: new(containerName), Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0}}},
		}},
		Template: corev1.PodTemplateSpec{ObjectMeta: podMeta(r), Spec: pod},
	}
}

func podSpec(r Run, name string, nodes int, image string, it compute.InstanceType) corev1.PodSpec {
	entry := []string{path.Join(binDir, "hangar"), "pod-entry", "--config", path.Join(configDir, "supervisor.json"),
		"--rank-env", "JOB_COMPLETION_INDEX"}
	c := corev1.Container{
		Name: containerName, Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Command: entry,
		Resources:                resources(it),
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: configDir, ReadOnly: true},
			{Name: "runs", MountPath: runsDir}, {Name: "cache", MountPath: cacheDir},
			{Name: "bin", MountPath: binDir, ReadOnly: r.Target.Supervisor.HostPath != ""},
		},
	}
	spec := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
		// The run talks to Hangar with its own token; it gets no Kubernetes credentials.
		AutomountServiceAccountToken: new(false), EnableServiceLinks: new(false),
		HostNetwork: r.Target.HostNetwork, TerminationGracePeriodSeconds: new(int64(terminationGrace)),
		NodeSelector: maps.Clone(it.NodeSelector), Tolerations: tolerations(it.Tolerations),
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: name, DefaultMode: new(int32(0o400))}}},
			{Name: "runs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			binVolume(r.Target.Supervisor),
		},
	}
	if r.Target.HostNetwork {
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	if nodes > 1 {
		spec.Subdomain = name
	}
	if img := r.Target.Supervisor.Image; img != "" {
		spec.InitContainers = []corev1.Container{{
			Name: "hangar", Image: img, ImagePullPolicy: corev1.PullIfNotPresent,
			Command:      []string{imageBinary, "pod-entry", "--install", path.Join(binDir, "hangar")},
			VolumeMounts: []corev1.VolumeMount{{Name: "bin", MountPath: binDir}},
		}}
	}
	return spec
}

func binVolume(s compute.KubeSupervisor) corev1.Volume {
	if s.HostPath != "" {
		return corev1.Volume{Name: "bin", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: s.HostPath, Type: new(corev1.HostPathDirectory)}}}
	}
	return corev1.Volume{Name: "bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

// podPlacement is what every pod of r runs and where: its image (podImage) and its instance
// type (instanceType).
func podPlacement(r Run) (string, compute.InstanceType, error) {
	image, err := podImage(r)
	if err != nil {
		return "", compute.InstanceType{}, err
	}
	it, err := instanceType(r)
	return image, it, err
}

// podImage is the run's environment image, else the target's default image.
func podImage(r Run) (string, error) {
	if servesByEntrypoint(r) {
		return serveImage(r)
	}
	if img := r.Spec.Environment.Image; img != "" {
		return img, nil
	}
	if r.Target.DefaultImage != "" {
		return r.Target.DefaultImage, nil
	}
	return "", fmt.Errorf("environment.image: required on a Kubernetes target (or set default_image on the compute)")
}

// instanceType is the job's resources.instance_type among the target's, else the default.
func instanceType(r Run) (compute.InstanceType, error) {
	name := r.Spec.Resources.InstanceType
	if name == "" {
		name = r.Target.DefaultInstanceType
	}
	if name == "" {
		return compute.InstanceType{}, nil
	}
	it, ok := r.Target.InstanceTypes[name]
	if !ok {
		return it, fmt.Errorf("resources.instance_type: %q is not an instance type of this Kubernetes target (it has %s)",
			name, instanceTypeNames(r.Target.InstanceTypes))
	}
	return it, nil
}

func instanceTypeNames(m map[string]compute.InstanceType) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

func resources(it compute.InstanceType) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: resourceList(it.Requests), Limits: resourceList(it.Limits)}
}

// resourceList converts quantities the spec decoder checked already (a bad one is left out).
func resourceList(r compute.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	if q, err := resource.ParseQuantity(r.CPU); err == nil && r.CPU != "" {
		out[corev1.ResourceCPU] = q
	}
	if q, err := resource.ParseQuantity(r.Memory); err == nil && r.Memory != "" {
		out[corev1.ResourceMemory] = q
	}
	if r.GPU > 0 {
		out["nvidia.com/gpu"] = *resource.NewQuantity(int64(r.GPU), resource.DecimalSI)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func tolerations(ts []compute.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range ts {
		out = append(out, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator),
			Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return out
}
