package supervisor

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/node"
)

// container runs the command inside an image with the run directory mounted at the same path,
// so every bound path (code, inputs, outputs, metrics file) means the same inside and out.
type container struct {
	rt    string // podman or docker binary
	name  string
	image string
}

// containerShell runs the command with bash when the image has it, else sh; the command is $0.
const containerShell = `[ -n "$VIRTUAL_ENV" ] && PATH="$VIRTUAL_ENV/bin:$PATH" && export PATH; ` +
	`if command -v bash >/dev/null 2>&1; then exec bash -c "$0"; else exec sh -c "$0"; fi`

// pull makes sure the image is on the node, pulling it when missing (output to the run's log).
func (c *container) pull(ctx context.Context, out io.Writer) error {
	if exec.CommandContext(ctx, c.rt, "image", "inspect", c.image).Run() == nil {
		fmt.Fprintf(out, "Using image %s (present on this node)\n", c.image)
		return nil
	}
	fmt.Fprintf(out, "Pulling image %s\n", c.image)
	cmd := exec.CommandContext(ctx, c.rt, "pull", c.image)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("image %s is not on this node and could not be pulled: %w", c.image, err)
	}
	return nil
}

// command builds `<runtime> run ...` for the workspace.
func (s *runEnvironment) containerCommand(w *workspace) (*exec.Cmd, error) {
	c := w.container
	envFile := filepath.Join(s.cfg.Dir, "hangar", "container.env")
	var long []string
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(w.containerVars)) {
		v := w.containerVars[k]
		if strings.ContainsAny(v, "\n\r") {
			long = append(long, "-e", k+"="+v)
			continue
		}
		lines = append(lines, k+"="+v)
	}
	if err := os.WriteFile(envFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	shm := s.spec.Spec.Resources.ShmSize
	if shm == "" {
		shm = "2g"
	}
	place := []string{"--network", "host", "-w", w.dir}
	tail := []string{"/bin/sh", "-c", containerShell, w.command}
	if w.imageServe != nil { // the image's own entrypoint, workdir and network (serveimage.go)
		place, tail = w.imageServe.runArgs(), nil
	}
	args := []string{"run", "--rm", "--name", c.name, "--shm-size", shm,
		"-v", s.cfg.Dir + ":" + s.cfg.Dir, "--env-file", envFile}
	args = append(args, place...)
	args = append(args, long...)
	if w.env != nil { // a managed environment built for this image
		args = append(args, "-v", w.env.Dir+":"+w.env.Dir+":ro")
	}
	args = append(args, gpuArgs(c.rt)...)
	args = append(args, strings.Fields(s.spec.Spec.Resources.DockerArgs)...)
	args = append(args, c.image)
	args = append(args, tail...)
	if err := w.box.AddContainer(c.rt, c.name); err != nil {
		return nil, err
	}
	return w.proc(true, w.vars, c.rt, args...), nil
}

// gpuArgs passes the node's GPUs through when it has any.
func gpuArgs(rt string) []string {
	if len(node.DetectGPUs(context.Background())) == 0 {
		return nil
	}
	if filepath.Base(rt) == "docker" {
		return []string{"--gpus", "all"}
	}
	return []string{"--device", "nvidia.com/gpu=all"}
}

// stop asks the runtime to stop the container: SIGTERM, then SIGKILL after the grace period.
func (c *container) stop(grace time.Duration) {
	secs := int(grace / time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	_ = exec.CommandContext(ctx, c.rt, "stop", "--time", fmt.Sprint(secs), c.name).Run()
}

// containerVars are the variables the command sees inside a container: Hangar's and the job's,
// not the host's (whose PATH and HOME mean nothing in the image).
func (s *runEnvironment) containerVars(host map[string]string) map[string]string {
	out := map[string]string{}
	keep := func(k string) bool {
		for _, p := range []string{"HANGAR_", "AZUREML_", "AZURE_ML_", "MLFLOW_", "PYTHONUNBUFFERED", "VIRTUAL_ENV"} {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		if k == "PORT" && s.spec.Spec.Serve != nil { // where a replica's server listens
			return true
		}
		_, user := s.spec.Spec.EnvironmentVariables[k]
		return user
	}
	for k, v := range host {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}
