package kubernetes

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/hangar-ml/hangar/internal/compute"
)

// A replica whose image serves by its own ENTRYPOINT/CMD (job.Serve.Entrypoint: Azure's custom
// containers) cannot have the supervisor as its container's entrypoint. Its Deployment's pods run
// the supervisor as a native sidecar (an init container that restarts: started first, stopped by
// the kubelet after the main container) and the image, untouched, as the main container:
//
//	init "hangar" (supervisor.image only)  copies the binary
//	init "run"    (restartPolicy Always)   hangar pod-entry: claims a run, fetches the model,
//	                                       probes, reports, relays the image's output
//	init "gate"                            hangar pod-entry --await: waits for the supervisor's
//	                                       "ready" (exit 0) or why not (exit 1: retried)
//	main "serve"                           the image, its own entrypoint, the model read-only
//
// The gate orders the image after the model. An image that exits is restarted by the kubelet
// with its backoff, as any Deployment's container (the pod's restartPolicy Always); its run
// stays alive, the readiness probe takes the pod out of the Service meanwhile, and the run's log
// says so (ContainerLog's restart line). The gate and the model's link have one path in every
// pod (the pod template names no run): the claimed run's supervisor links its model there.
const (
	serveContainer = "serve"
	gateContainer  = "gate"
)

func servesByEntrypoint(r Run) bool { return r.Spec.Serve != nil && r.Spec.Serve.Entrypoint }

// serveImage is the image of such a replica: its environment's (it is the server).
func serveImage(r Run) (string, error) {
	sv := r.Spec.Serve
	switch {
	case r.Spec.Environment.Image == "":
		return "", fmt.Errorf("environment.image: required for an image that serves by its own entrypoint")
	case sv.Port < 1 || sv.Port > 65535:
		return "", fmt.Errorf("environment.inference_config: port %d is not a port", sv.Port)
	case sv.ModelInput != "" && !cleanAbs(sv.ModelMount):
		return "", fmt.Errorf("model_mount_path: %q is not an absolute, clean path", sv.ModelMount)
	case sv.ModelFolder != "" && (sv.ModelFolder != path.Base(sv.ModelFolder) || sv.ModelFolder == "." || sv.ModelFolder == ".."):
		return "", fmt.Errorf("model.path: the model's folder %q is not a folder name", sv.ModelFolder)
	}
	return r.Spec.Environment.Image, nil
}

func cleanAbs(p string) bool {
	return strings.HasPrefix(p, "/") && p != "/" && path.Clean(p) == p
}

// serveGate is the file the supervisor writes "ready" (or why not) to; serveModel is the link
// the claimed run's supervisor points at its materialized model (its own inputs/<name>), which
// the serving container mounts (kubelet resolves a subPath's links inside the volume).
const (
	serveGate     = runsDir + "/serve-gate"
	serveModelSub = "serve-model"
)

func serveModel(r Run) string {
	if r.Spec.Serve.ModelInput == "" {
		return ""
	}
	return path.Join(runsDir, serveModelSub)
}

// withSidecar turns the supervisor's container of spec into the pod's sidecar, adds the gate,
// and makes the image the pod's main container.
func withSidecar(spec *corev1.PodSpec, r Run, image string, it compute.InstanceType, port corev1.ContainerPort) {
	always := corev1.ContainerRestartPolicyAlways
	sup := spec.Containers[0]
	sup.RestartPolicy = &always
	// The instance type sizes the model server; the supervisor takes what is left.
	sup.Resources = corev1.ResourceRequirements{}
	gate := corev1.Container{
		Name: gateContainer, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:                  []string{path.Join(binDir, "hangar"), "pod-entry", "--await", serveGate},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		VolumeMounts: []corev1.VolumeMount{
			{Name: "runs", MountPath: runsDir, ReadOnly: true}, {Name: "bin", MountPath: binDir, ReadOnly: true}},
	}
	spec.InitContainers = append(spec.InitContainers, sup, gate)
	spec.Containers = []corev1.Container{serveMain(r, image, it, port)}
}

// serveMain is the image as the pod's main container: no command or args (its own ENTRYPOINT
// and CMD), its port, the model read-only where AZUREML_MODEL_DIR says.
func serveMain(r Run, image string, it compute.InstanceType, port corev1.ContainerPort) corev1.Container {
	sv := r.Spec.Serve
	c := corev1.Container{
		Name: serveContainer, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: resources(it), Env: serveEnv(r), Ports: []corev1.ContainerPort{port},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	if sv.ModelInput != "" {
		mount := sv.ModelMount
		if sv.ModelFolder != "" {
			mount = path.Join(mount, sv.ModelFolder)
		}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "runs", MountPath: mount, ReadOnly: true, SubPath: serveModelSub}}
	}
	return c
}

// serveEnv is the serving container's environment: Hangar's, then the deployment's
// environment_variables. The run token is not in it: the image does not talk to Hangar. Nor is
// the run's id: the pod template is every replica's.
func serveEnv(r Run) []corev1.EnvVar {
	sv := r.Spec.Serve
	vars := map[string]string{"PORT": strconv.Itoa(sv.Port)}
	if sv.ModelInput != "" {
		vars["AZUREML_MODEL_DIR"] = sv.ModelMount
	}
	for k, v := range r.Spec.EnvironmentVariables {
		vars[k] = v
	}
	out := make([]corev1.EnvVar, 0, len(vars))
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, corev1.EnvVar{Name: k, Value: vars[k]})
	}
	return out
}
