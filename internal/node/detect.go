package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// NvidiaSMIQuery is the nvidia-smi invocation whose output ParseNvidiaSMI reads.
var NvidiaSMIQuery = []string{"--query-gpu=index,name,memory.total,uuid", "--format=csv,noheader,nounits"}

// Detect describes this machine. Missing facts are left empty rather than failing.
func Detect(ctx context.Context) *compute.NodeInfo {
	n := &compute.NodeInfo{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	n.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if v := ParseOSRelease(string(b)); v != "" {
			n.OS = v
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		n.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		n.MemoryBytes, _ = ParseMeminfo(string(b))
	}
	n.GPUs = DetectGPUs(ctx)
	if rt := ContainerRuntime(); rt != "" {
		n.ContainerRuntime = filepath.Base(rt)
	}
	return n
}

// DetectGPUs asks nvidia-smi (when on PATH) for the GPUs; none when it is absent or fails.
func DetectGPUs(ctx context.Context) []compute.GPU {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, NvidiaSMIQuery...).Output()
	if err != nil {
		return nil
	}
	gpus, err := ParseNvidiaSMI(string(out))
	if err != nil {
		return nil
	}
	return gpus
}

// MachineID names this machine for the processes a backend started here: its hostname and
// /etc/machine-id (stable across reboots). A process id means something only on the machine
// that names it.
func MachineID() string {
	host, _ := os.Hostname()
	b, _ := os.ReadFile("/etc/machine-id")
	if id := strings.TrimSpace(string(b)); id != "" {
		return host + "/" + id
	}
	return host
}
