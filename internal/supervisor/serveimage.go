package supervisor

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// A replica whose image serves by its own ENTRYPOINT/CMD (job.Serve.Entrypoint: Azure's custom
// containers, an inference_config and no command) runs the image with no command. It gets a
// network of its own and its inference_config port published on a free port of the node's
// loopback, so that two replicas on one node never collide on the image's fixed port; the model
// is mounted read-only where AZUREML_MODEL_DIR says inside the container, as Azure mounts it.
// The image cannot check the replica's secret: the supervisor's proxy (serveproxy.go) answers
// the router in its place, where the router reaches the node, and forwards what carries it.

// imageServe is how such a replica's container is started.
type imageServe struct {
	hostPort, port int      // hostPort: the image's port, published on the node's loopback
	proxyPort      int      // where the supervisor's proxy answers the router
	mounts         []string // -v arguments: the model
}

// runArgs are the `run` arguments that place the container: its port published on loopback,
// the model.
func (is *imageServe) runArgs() []string {
	return append([]string{"-p", "127.0.0.1:" + strconv.Itoa(is.hostPort) + ":" + strconv.Itoa(is.port)}, is.mounts...)
}

// prepareImage picks the node's ports, starts the proxy in front of the image's, sets PORT
// (the image's own port) and AZUREML_MODEL_DIR (the mount inside the container) and plans the
// model's mount.
func (s *replicaServer) prepareImage(w *workspace, l listen, values, env map[string]string) error {
	if s.sidecar() { // a Kubernetes pod runs the image beside this supervisor
		return s.prepareSidecar(w, values)
	}
	sv := s.spec.Spec.Serve
	if sv.Port < 1 || sv.Port > 65535 {
		return fmt.Errorf("serve: environment.inference_config: port %d is not a port", sv.Port)
	}
	hostPort, err := freePort()
	if err != nil {
		return fmt.Errorf("serve: pick a port: %w", err)
	}
	proxyPort, err := startReplicaProxy(l, "127.0.0.1:"+strconv.Itoa(hostPort), s.log)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	is := &imageServe{hostPort: hostPort, port: sv.Port, proxyPort: proxyPort}
	env["PORT"] = strconv.Itoa(sv.Port)
	if sv.ModelInput != "" {
		mounts, err := modelMount(values["inputs."+sv.ModelInput], sv.ModelFolder, sv.ModelMount)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		is.mounts = mounts
		env["AZUREML_MODEL_DIR"] = sv.ModelMount
	}
	w.servePort, w.imageServe = proxyPort, is
	return nil
}

// modelMount is the -v argument that puts the model's files where Azure does: a folder model
// at <mount>/<folder>, a one-file model's file directly in <mount>.
func modelMount(input, folder, mount string) ([]string, error) {
	switch {
	case input == "":
		return nil, fmt.Errorf("the model input was not materialized")
	case !safeMountPath(mount):
		return nil, fmt.Errorf("model mount path %q is not an absolute, clean path without : or ,", mount)
	case strings.ContainsAny(input, ":,"):
		return nil, fmt.Errorf("the model's folder %s holds : or , which a container mount cannot name", input)
	case folder != "" && (folder != path.Base(folder) || folder == "." || folder == ".." || strings.ContainsAny(folder, ":,\\")):
		return nil, fmt.Errorf("model folder %q is not a folder name", folder)
	}
	dst := mount
	if folder != "" {
		dst = path.Join(mount, folder)
	}
	return []string{"-v", input + ":" + dst + ":ro"}, nil
}

func safeMountPath(p string) bool {
	return strings.HasPrefix(p, "/") && p != "/" && path.Clean(p) == p &&
		!strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f || r == ':' || r == ',' })
}

// checkImage refuses to start an image that serves by its entrypoint without a container
// runtime (its command would be nothing), and says in the run's log how it starts.
func (s *replicaServer) checkImage(w *workspace, log io.Writer) error {
	if w.imageServe == nil {
		return nil
	}
	if w.container == nil {
		return fmt.Errorf("environment.image: %s serves by its own entrypoint, which needs a container runtime (docker or podman) on this node; none was found",
			s.spec.Spec.Environment.Image)
	}
	fmt.Fprintf(log, "Starting %s with its own entrypoint; its port %d is published on 127.0.0.1:%d, and Hangar's proxy answers the router on port %d of this node with the replica's secret\n",
		w.container.image, w.imageServe.port, w.imageServe.hostPort, w.imageServe.proxyPort)
	return nil
}
