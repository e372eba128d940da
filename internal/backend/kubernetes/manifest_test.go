package kubernetes

import (
	"encoding/json"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

func target() compute.KubernetesSpec {
	return compute.KubernetesSpec{Namespace: "ml", DefaultImage: "python:3.12-slim",
		Supervisor: compute.KubeSupervisor{Image: "registry.example/hangar:1"},
		InstanceTypes: map[string]compute.InstanceType{
			"gpu": {NodeSelector: map[string]string{"pool": "a100"},
				Requests:    compute.ResourceList{CPU: "4", Memory: "16Gi", GPU: 1},
				Limits:      compute.ResourceList{Memory: "16Gi", GPU: 1},
				Tolerations: []compute.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}},
		}}
}

func TestJobName(t *testing.T) {
	for _, tc := range []struct {
		run     string
		attempt int
		want    string
	}{
		{"quiet-otter-12", 1, "hangar-quiet-otter-12"},
		{"quiet-otter-12", 3, "hangar-quiet-otter-12-3"},
		{"Plucky_Otter_K3", 1, "hangar-plucky-otter-k3-" + shortHash("Plucky_Otter_K3")},
	} {
		if got := JobName(tc.run, tc.attempt); got != tc.want {
			t.Errorf("JobName(%q, %d) = %q, want %q", tc.run, tc.attempt, got, tc.want)
		}
	}
	long := strings.Repeat("a", 80)
	if a, b := JobName(long, 2), JobName(long+"b", 2); len(a) > maxJobName || a == b {
		t.Errorf("long ids: %q (%d) and %q: want distinct names of at most %d", a, len(a), b, maxJobName)
	}
	if l := RunLabel("x/y z"); !validLabelValue(l) || RunLabel("ok_id.1") != "ok_id.1" {
		t.Errorf("RunLabel: %q", l)
	}
}

func TestBuildOneNode(t *testing.T) {
	r := Run{RunID: "quiet-otter-12", Token: "tok", Attempt: 1, ServerURL: "http://10.0.0.1:8080", Target: target(),
		Spec: job.Spec{Command: "python train.py", Resources: job.Resources{InstanceType: "gpu"},
			Environment: job.Environment{Image: "pytorch/pytorch:2.4"}}}
	o, err := Build(r)
	if err != nil {
		t.Fatal(err)
	}
	j := o.Job
	if j.Name != "hangar-quiet-otter-12" || j.Namespace != "ml" || j.Labels[LabelRun] != "quiet-otter-12" || j.Labels[LabelManagedBy] != "hangar" {
		t.Errorf("job meta %+v", j.ObjectMeta)
	}
	if *j.Spec.Completions != 1 || *j.Spec.CompletionMode != batchv1.IndexedCompletion || *j.Spec.PodReplacementPolicy != batchv1.Failed || *j.Spec.BackoffLimit != 0 {
		t.Errorf("job spec %+v", j.Spec)
	}
	rules := j.Spec.PodFailurePolicy.Rules
	if len(rules) != 2 || rules[0].Action != batchv1.PodFailurePolicyActionIgnore || rules[0].OnPodConditions[0].Type != corev1.DisruptionTarget ||
		rules[1].Action != batchv1.PodFailurePolicyActionFailJob {
		t.Errorf("pod failure policy %+v", rules)
	}
	p := j.Spec.Template.Spec
	c := p.Containers[0]
	if c.Image != "pytorch/pytorch:2.4" || c.Command[0] != "/hangar/bin/hangar" || c.Command[1] != "pod-entry" {
		t.Errorf("container %s %v", c.Image, c.Command)
	}
	if q := c.Resources.Requests["nvidia.com/gpu"]; q.Value() != 1 || c.Resources.Requests.Cpu().String() != "4" || c.Resources.Limits.Memory().String() != "16Gi" {
		t.Errorf("resources %+v", c.Resources)
	}
	if p.NodeSelector["pool"] != "a100" || len(p.Tolerations) != 1 || p.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Errorf("placement %v %v", p.NodeSelector, p.Tolerations)
	}
	if *p.AutomountServiceAccountToken || p.RestartPolicy != corev1.RestartPolicyNever || p.Subdomain != "" || o.Service != nil {
		t.Errorf("pod spec: token %v restart %s subdomain %q service %v", *p.AutomountServiceAccountToken, p.RestartPolicy, p.Subdomain, o.Service)
	}
	if len(p.InitContainers) != 1 || p.InitContainers[0].Image != "registry.example/hangar:1" || p.InitContainers[0].Command[0] != imageBinary {
		t.Errorf("init containers %+v", p.InitContainers)
	}
	var cfg api.SupervisorConfig
	if err := json.Unmarshal(o.Secret.Data["supervisor.json"], &cfg); err != nil || cfg.Token != "tok" ||
		cfg.ServerURL != "http://10.0.0.1:8080" || cfg.InImage != "pytorch/pytorch:2.4" || len(cfg.Nodes) != 0 || cfg.Dir != "/hangar/runs/quiet-otter-12" {
		t.Errorf("supervisor config %+v %v", cfg, err)
	}
	o.SetOwner(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: j.Name, UID: "u1"}})
	if ref := o.Secret.OwnerReferences; len(ref) != 1 || ref[0].UID != "u1" || ref[0].Kind != "Job" {
		t.Errorf("owner %+v", ref)
	}
}

// Two nodes: an Indexed Job of two pods whose host names a headless Service resolves; the
// supervisors get those names as the run's nodes (node 0 is MASTER_ADDR).
func TestBuildTwoNodes(t *testing.T) {
	tg := target()
	tg.QueueName = "team-a"
	tg.Supervisor = compute.KubeSupervisor{HostPath: "/opt/hangar"}
	o, err := Build(Run{RunID: "r2", Attempt: 2, Target: tg, Spec: job.Spec{Resources: job.Resources{InstanceCount: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	j := o.Job
	if j.Name != "hangar-r2-2" || *j.Spec.Completions != 2 || *j.Spec.Parallelism != 2 || j.Labels[LabelKueueQueue] != "team-a" || !*j.Spec.Suspend {
		t.Errorf("job %s completions %d parallelism %d labels %v", j.Name, *j.Spec.Completions, *j.Spec.Parallelism, j.Labels)
	}
	if o.Service == nil || o.Service.Spec.ClusterIP != corev1.ClusterIPNone || o.Service.Name != j.Name ||
		o.Service.Spec.Selector[LabelJobName] != j.Name || j.Spec.Template.Spec.Subdomain != j.Name {
		t.Fatalf("service %+v subdomain %q", o.Service, j.Spec.Template.Spec.Subdomain)
	}
	var cfg api.SupervisorConfig
	_ = json.Unmarshal(o.Secret.Data["supervisor.json"], &cfg)
	if want := []string{"hangar-r2-2-0.hangar-r2-2", "hangar-r2-2-1.hangar-r2-2"}; strings.Join(cfg.Nodes, ",") != strings.Join(want, ",") {
		t.Errorf("nodes %v, want %v", cfg.Nodes, want)
	}
	p := j.Spec.Template.Spec
	if p.Containers[0].Image != "python:3.12-slim" || len(p.InitContainers) != 0 || p.Volumes[3].HostPath == nil || p.Volumes[3].HostPath.Path != "/opt/hangar" {
		t.Errorf("default image / host path binary: %s %+v", p.Containers[0].Image, p.Volumes[3])
	}
}

func TestBuildRefuses(t *testing.T) {
	tg := target()
	tg.DefaultImage = ""
	for _, tc := range []struct {
		spec job.Spec
		want string
	}{
		{job.Spec{}, "environment.image: required"},
		{job.Spec{Serve: &job.Serve{Entrypoint: true, Port: 8501}}, "environment.image: required for an image that serves by its own entrypoint"},
		{job.Spec{Environment: job.Environment{Image: "x"}, Serve: &job.Serve{Entrypoint: true}}, "environment.inference_config: port 0 is not a port"},
		{job.Spec{Environment: job.Environment{Image: "x"}, Serve: &job.Serve{Entrypoint: true, Port: 80, ModelInput: "model", ModelMount: "rel/dir"}},
			`model_mount_path: "rel/dir" is not an absolute, clean path`},
		{job.Spec{Environment: job.Environment{Image: "x"}, Serve: &job.Serve{Entrypoint: true, Port: 80, ModelInput: "model", ModelMount: "/m", ModelFolder: "../up"}},
			`model.path: the model's folder "../up" is not a folder name`},
		{job.Spec{Environment: job.Environment{Image: "x"}, Resources: job.Resources{InstanceType: "huge"}}, `resources.instance_type: "huge" is not an instance type of this Kubernetes target (it has gpu)`},
	} {
		if tc.spec.Serve != nil && tc.spec.Serve.Entrypoint && tc.spec.Environment.Image != "" {
			// Never a Job's pod: only an online deployment's replicas run such an image.
			if _, err := Build(Run{RunID: "r", Target: tg, Spec: tc.spec}); err == nil || !strings.Contains(err.Error(), "not as a job") {
				t.Errorf("Build(%+v) as a Job = %v", tc.spec, err)
			}
		}
		build := func(r Run) error { _, err := Build(r); return err }
		if tc.spec.Serve != nil {
			build = func(r Run) error { _, err := BuildServing(r); return err }
		}
		if err := build(Run{RunID: "r", Target: tg, Spec: tc.spec}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build(%+v) = %v, want %q", tc.spec, err, tc.want)
		}
	}
}
