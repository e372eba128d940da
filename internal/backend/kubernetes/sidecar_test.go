package kubernetes

import (
	"encoding/json"
	"path"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// A replica whose image serves by its own entrypoint is a Deployment's pod: the supervisor is a
// native sidecar that claims the run, a gate holds the image until the model is in place, and
// the image is the main container with its own entrypoint, its port (the Service's "score", a
// hostPort on the host's network), its probes, its variables and the model read-only at
// AZUREML_MODEL_DIR; the kubelet restarts it (restartPolicy Always). The template names no run.
func TestBuildServesByEntrypoint(t *testing.T) {
	serve := &job.Serve{Endpoint: "e", Deployment: "tf", Entrypoint: true, Port: 8501, Probe: "/v1/models/m",
		ModelInput: "model", ModelFolder: "half_plus_two", ModelMount: "/var/azureml-app/azureml-models/tf/1"}
	spec := job.Spec{Command: "ignored", Resources: job.Resources{InstanceType: "gpu"}, Serve: serve,
		Environment:          job.Environment{Image: "docker.io/tensorflow/serving:2"},
		EnvironmentVariables: map[string]string{"MODEL_NAME": "half_plus_two", "PORT": "overridden by the deployment"}}
	hostPath := target()
	hostPath.Supervisor = compute.KubeSupervisor{HostPath: "/opt/hangar"}
	hostPath.HostNetwork = true
	for _, tc := range []struct {
		name     string
		tg       compute.KubernetesSpec
		init     []string
		hostPort int32
	}{
		{"supervisor image", target(), []string{"hangar", "run", "gate"}, 0},
		{"host path, host network", hostPath, []string{"run", "gate"}, 8501},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := BuildServing(Run{RunID: "r1", Token: "tok", Attempt: 1, Target: tc.tg, Spec: spec})
			if err != nil {
				t.Fatal(err)
			}
			other, _ := BuildServing(Run{RunID: "r2", Token: "tok2", Attempt: 1, Target: tc.tg, Spec: spec})
			if d := cmp.Diff(o.Deployment, other.Deployment); d != "" {
				t.Errorf("the Deployment depends on the run (-r1 +r2):\n%s", d)
			}
			p := o.Deployment.Spec.Template.Spec
			var names []string
			for _, c := range p.InitContainers {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.init) {
				t.Fatalf("init containers %v, want %v", names, tc.init)
			}
			sup, gate := p.InitContainers[len(names)-2], p.InitContainers[len(names)-1]
			if sup.RestartPolicy == nil || *sup.RestartPolicy != corev1.ContainerRestartPolicyAlways ||
				sup.Image != spec.Environment.Image || !slices.Equal(sup.Command, []string{"/hangar/bin/hangar", "pod-entry", "--config", "/hangar/config/supervisor.json"}) ||
				len(sup.Resources.Requests) != 0 || len(sup.Ports) != 0 || sup.ReadinessProbe != nil || len(sup.VolumeMounts) != 4 {
				t.Errorf("the supervisor's sidecar: %+v", sup)
			}
			if gate.RestartPolicy != nil || !slices.Equal(gate.Command, []string{"/hangar/bin/hangar", "pod-entry", "--await", "/hangar/runs/serve-gate"}) ||
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
			wantEnv := []corev1.EnvVar{{Name: "AZUREML_MODEL_DIR", Value: serve.ModelMount}, {Name: "MODEL_NAME", Value: "half_plus_two"},
				{Name: "PORT", Value: "overridden by the deployment"}}
			if d := cmp.Diff(wantEnv, c.Env); d != "" {
				t.Errorf("the image's variables (-want +got):\n%s", d)
			}
			wantMount := []corev1.VolumeMount{{Name: "runs", ReadOnly: true, SubPath: "serve-model",
				MountPath: "/var/azureml-app/azureml-models/tf/1/half_plus_two"}}
			if d := cmp.Diff(wantMount, c.VolumeMounts); d != "" {
				t.Errorf("the model's mount (-want +got):\n%s", d)
			}
			wantPort := []corev1.ContainerPort{{Name: "score", ContainerPort: 8501, HostPort: tc.hostPort, Protocol: corev1.ProtocolTCP}}
			if q := c.Resources.Limits["nvidia.com/gpu"]; q.Value() != 1 || !cmp.Equal(c.Ports, wantPort) {
				t.Errorf("the image's resources %+v, ports %+v", c.Resources, c.Ports)
			}
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != serve.Probe || c.LivenessProbe == nil {
				t.Errorf("the image's probes: %+v %+v", c.ReadinessProbe, c.LivenessProbe)
			}
			if *p.AutomountServiceAccountToken || p.RestartPolicy != corev1.RestartPolicyAlways || p.Volumes[0].Secret.SecretName != o.Deployment.Name ||
				p.HostNetwork != tc.tg.HostNetwork {
				t.Errorf("pod: token %v restart %s host network %v volumes %+v", *p.AutomountServiceAccountToken, p.RestartPolicy, p.HostNetwork, p.Volumes)
			}
			if sp := o.Service.Spec.Ports; len(sp) != 1 || sp[0].Port != 8501 || sp[0].TargetPort.StrVal != "score" {
				t.Errorf("Service ports %+v", sp)
			}
			var cfg api.SupervisorConfig
			if err := json.Unmarshal(o.Secret.Data["template.json"], &cfg); err != nil {
				t.Fatal(err)
			}
			// The claimed run's supervisor links its model (<Dir>/inputs/<name>) at serve-model,
			// which the image's container mounts.
			if cfg.ServeGate != "/hangar/runs/serve-gate" || cfg.ServeModel != path.Join(runsDir, wantMount[0].SubPath) || cfg.RunID != "" {
				t.Errorf("supervisor config: gate %q model %q run %q", cfg.ServeGate, cfg.ServeModel, cfg.RunID)
			}
		})
	}
}

// Without a model there is nothing to mount, and no AZUREML_MODEL_DIR.
func TestBuildServesByEntrypointNoModel(t *testing.T) {
	o, err := BuildServing(Run{RunID: "r1", Target: target(), Spec: job.Spec{Environment: job.Environment{Image: "img"},
		Serve: &job.Serve{Entrypoint: true, Port: 80}}})
	if err != nil {
		t.Fatal(err)
	}
	c := o.Deployment.Spec.Template.Spec.Containers[0]
	var cfg api.SupervisorConfig
	_ = json.Unmarshal(o.Secret.Data["template.json"], &cfg)
	if len(c.VolumeMounts) != 0 || slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "AZUREML_MODEL_DIR" }) || cfg.ServeModel != "" {
		t.Errorf("no model: mounts %+v env %+v config model %q", c.VolumeMounts, c.Env, cfg.ServeModel)
	}
}

// A replica of a scoring script on the host's network: the supervisor's port is its hostPort
// (the scheduler keeps two replicas of one port apart), taken from the Deployment's name when the
// deployment names none (the same for every replica, seldom another deployment's), and the
// Service's.
func TestBuildServingHostNetwork(t *testing.T) {
	tg := target()
	tg.HostNetwork = true
	r := Run{RunID: "r1", Workspace: "w", Target: tg, Spec: job.Spec{Command: "python score.py", Serve: &job.Serve{Endpoint: "e", Deployment: "blue"}}}
	o, err := BuildServing(r)
	if err != nil {
		t.Fatal(err)
	}
	green := r
	green.Spec.Serve = &job.Serve{Endpoint: "e", Deployment: "green"}
	og, _ := BuildServing(green)
	port := o.Service.Spec.Ports[0].Port
	c := o.Deployment.Spec.Template.Spec.Containers[0]
	if !o.Deployment.Spec.Template.Spec.HostNetwork || port < hostPortBase || port >= hostPortBase+hostPortSpan || port == og.Service.Spec.Ports[0].Port ||
		len(c.Ports) != 1 || c.Ports[0].ContainerPort != port || c.Ports[0].HostPort != port {
		t.Errorf("host network: Service port %d (green's %d), container ports %+v", port, og.Service.Spec.Ports[0].Port, c.Ports)
	}
	var cfg api.SupervisorConfig
	_ = json.Unmarshal(o.Secret.Data["template.json"], &cfg)
	if cfg.ServePort != int(port) {
		t.Errorf("the supervisor serves on %d, the pod declares %d", cfg.ServePort, port)
	}
	r.Target.HostNetwork = false
	if o, _ := BuildServing(r); o.Service.Spec.Ports[0].Port != DefaultServePort || o.Deployment.Spec.Template.Spec.Containers[0].Ports[0].HostPort != 0 {
		t.Errorf("pod network: %+v", o.Deployment.Spec.Template.Spec.Containers[0].Ports)
	}
}
