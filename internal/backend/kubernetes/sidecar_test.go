package kubernetes

import (
	"encoding/json"
	"path"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// A replica whose image serves by its own entrypoint: the supervisor is a native sidecar, a gate
// holds the image until the model is in place, and the image is the main container with its own
// entrypoint, its port, its variables and the model read-only at AZUREML_MODEL_DIR.
func TestBuildServesByEntrypoint(t *testing.T) {
	serve := &job.Serve{Endpoint: "e", Deployment: "tf", Entrypoint: true, Port: 8501, Probe: "/v1/models/m",
		ModelInput: "model", ModelFolder: "half_plus_two", ModelMount: "/var/azureml-app/azureml-models/tf/1"}
	spec := job.Spec{Command: "ignored", Resources: job.Resources{InstanceType: "gpu"}, Serve: serve,
		Environment:          job.Environment{Image: "docker.io/tensorflow/serving:2"},
		EnvironmentVariables: map[string]string{"MODEL_NAME": "half_plus_two", "PORT": "overridden by the deployment"}}
	hostPath := target()
	hostPath.Supervisor = compute.KubeSupervisor{HostPath: "/opt/hangar"}
	for _, tc := range []struct {
		name string
		tg   compute.KubernetesSpec
		init []string
	}{
		{"supervisor image", target(), []string{"hangar", "run", "gate"}},
		{"host path", hostPath, []string{"run", "gate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Build(Run{RunID: "r1", Token: "tok", Attempt: 1, Target: tc.tg, Spec: spec})
			if err != nil {
				t.Fatal(err)
			}
			p := o.Job.Spec.Template.Spec
			var names []string
			for _, c := range p.InitContainers {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.init) {
				t.Fatalf("init containers %v, want %v", names, tc.init)
			}
			sup, gate := p.InitContainers[len(names)-2], p.InitContainers[len(names)-1]
			if sup.RestartPolicy == nil || *sup.RestartPolicy != corev1.ContainerRestartPolicyAlways ||
				sup.Image != spec.Environment.Image || sup.Command[1] != "pod-entry" || len(sup.Resources.Requests) != 0 ||
				sup.TerminationMessagePolicy != corev1.TerminationMessageReadFile || len(sup.VolumeMounts) != 4 {
				t.Errorf("the supervisor's sidecar: %+v", sup)
			}
			if gate.RestartPolicy != nil || !slices.Equal(gate.Command, []string{"/hangar/bin/hangar", "pod-entry", "--await", "/hangar/runs/r1/serve-gate"}) ||
				!gate.VolumeMounts[0].ReadOnly {
				t.Errorf("the gate: %+v", gate)
			}
			if len(p.Containers) != 1 {
				t.Fatalf("containers %+v", p.Containers)
			}
			c := p.Containers[0]
			if c.Name != serveContainer || c.Image != spec.Environment.Image || c.Command != nil || c.Args != nil {
				t.Errorf("the image must keep its own entrypoint: %s %s %v %v", c.Name, c.Image, c.Command, c.Args)
			}
			wantEnv := []corev1.EnvVar{{Name: "AZUREML_MODEL_DIR", Value: serve.ModelMount}, {Name: "AZUREML_RUN_ID", Value: "r1"},
				{Name: "HANGAR_RUN_ID", Value: "r1"}, {Name: "MODEL_NAME", Value: "half_plus_two"}, {Name: "PORT", Value: "overridden by the deployment"}}
			if d := cmp.Diff(wantEnv, c.Env); d != "" {
				t.Errorf("the image's variables (-want +got):\n%s", d)
			}
			wantMount := []corev1.VolumeMount{{Name: "runs", ReadOnly: true, SubPath: "r1/inputs/model",
				MountPath: "/var/azureml-app/azureml-models/tf/1/half_plus_two"}}
			if d := cmp.Diff(wantMount, c.VolumeMounts); d != "" {
				t.Errorf("the model's mount (-want +got):\n%s", d)
			}
			if q := c.Resources.Limits["nvidia.com/gpu"]; q.Value() != 1 || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8501 {
				t.Errorf("the image's resources %+v, ports %+v", c.Resources, c.Ports)
			}
			if *p.AutomountServiceAccountToken || p.RestartPolicy != corev1.RestartPolicyNever || p.Volumes[0].Secret.SecretName != o.Job.Name {
				t.Errorf("pod: token %v restart %s volumes %+v", *p.AutomountServiceAccountToken, p.RestartPolicy, p.Volumes)
			}
			if r := o.Job.Spec.PodFailurePolicy.Rules[1]; r.Action != batchv1.PodFailurePolicyActionFailJob || *r.OnExitCodes.ContainerName != containerName {
				t.Errorf("pod failure policy %+v", r)
			}
			var cfg api.SupervisorConfig
			if err := json.Unmarshal(o.Secret.Data["supervisor.json"], &cfg); err != nil {
				t.Fatal(err)
			}
			// The supervisor materializes its inputs at <Dir>/inputs/<name>: that is what the
			// image's container mounts.
			if cfg.ServeGate != "/hangar/runs/r1/serve-gate" || cfg.ServeModel != path.Join(cfg.Dir, "inputs", "model") ||
				cfg.ServeModel != path.Join(runsDir, wantMount[0].SubPath) {
				t.Errorf("supervisor config: gate %q model %q dir %q", cfg.ServeGate, cfg.ServeModel, cfg.Dir)
			}
		})
	}
}

// Without a model there is nothing to mount, and no AZUREML_MODEL_DIR.
func TestBuildServesByEntrypointNoModel(t *testing.T) {
	o, err := Build(Run{RunID: "r1", Target: target(), Spec: job.Spec{Environment: job.Environment{Image: "img"},
		Serve: &job.Serve{Entrypoint: true, Port: 80}}})
	if err != nil {
		t.Fatal(err)
	}
	c := o.Job.Spec.Template.Spec.Containers[0]
	var cfg api.SupervisorConfig
	_ = json.Unmarshal(o.Secret.Data["supervisor.json"], &cfg)
	if len(c.VolumeMounts) != 0 || slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "AZUREML_MODEL_DIR" }) || cfg.ServeModel != "" {
		t.Errorf("no model: mounts %+v env %+v config model %q", c.VolumeMounts, c.Env, cfg.ServeModel)
	}
}
