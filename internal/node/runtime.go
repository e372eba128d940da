package node

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// RuntimeSetting is the node setting that picks the container runtime: "auto" (default: podman,
// then docker, when its engine answers), "none", "podman" or "docker".
const RuntimeSetting = "HANGAR_CONTAINER_RUNTIME"

// ContainerRuntime returns the path of the container runtime to use on this node, or "" when
// there is none (or the node setting says none). A docker client without a running engine does
// not count.
func ContainerRuntime() string {
	want := os.Getenv(RuntimeSetting)
	names := []string{"podman", "docker"}
	switch want {
	case "none", "off", "false":
		return ""
	case "podman", "docker":
		names = []string{want}
	}
	for _, name := range names {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = exec.CommandContext(ctx, path, "info").Run()
		cancel()
		if err == nil {
			return path
		}
	}
	return ""
}
