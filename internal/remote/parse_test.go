package remote

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hangar-ml/hangar/internal/compute"
)

func TestAliveFrom(t *testing.T) {
	running := "10 (sh) S 1 10 10 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0"
	zombie := "10 (sh) Z 1 10 10 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0"
	tests := []struct {
		out  string
		p    Proc
		want bool
	}{
		{running, Proc{PID: 10, StartTime: 500}, true},
		{running, Proc{PID: 10}, true},
		{running, Proc{PID: 10, StartTime: 499}, false}, // pid reused
		{zombie, Proc{PID: 10, StartTime: 500}, false},
		{"10 (sh) X 1 10 10 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0", Proc{PID: 10, StartTime: 500}, false}, // dead
		{"11 (sh) S 1 10 10 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0", Proc{PID: 10, StartTime: 500}, false}, // another's stat
		{"10 (sh) S 1 10 10 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ? 0 0", Proc{PID: 10, StartTime: 500}, false},   // unreadable
		{"alive\n", Proc{PID: 10, StartTime: 500}, true},                                                    // no /proc: kill -0 only
		{"gone\n", Proc{PID: 10}, false},
	}
	for _, tt := range tests {
		if got := aliveFrom(tt.out, tt.p); got != tt.want {
			t.Errorf("aliveFrom(%q, %+v) = %v, want %v", tt.out, tt.p, got, tt.want)
		}
	}
}

func TestParseNode(t *testing.T) {
	base := "@@uname\nLinux\n6.1.0\nx86_64\n@@hostname\ngpu1\n@@home\n/home/u\n@@cores\n8\n" +
		"@@meminfo\nMemTotal:       16384 kB\n@@osrelease\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n" +
		"@@path bash\n/usr/bin/bash\n@@path docker\n/usr/bin/docker\n@@path podman\n@@path nvidia-smi\n/usr/bin/nvidia-smi\n" +
		"@@engine docker\n1\n"
	tests := []struct {
		name string
		out  string
		want Node
	}{{
		name: "gpus",
		out:  base + "@@gpus\n0, NVIDIA H100 80GB HBM3, 81559, GPU-abc\n@@gpuexit 0\n@@end\n",
		want: Node{
			NodeInfo: compute.NodeInfo{Hostname: "gpu1", OS: "Debian GNU/Linux 12 (bookworm)", Arch: "amd64", Kernel: "6.1.0",
				Cores: 8, MemoryBytes: 16384 << 10, GPUs: []compute.GPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, UUID: "GPU-abc"}}},
			Home: "/home/u", Bash: "/usr/bin/bash", Docker: "/usr/bin/docker", NvidiaSMI: "/usr/bin/nvidia-smi",
		},
	}, {
		name: "driver broken",
		out:  base + "@@gpus\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n@@gpuexit 9\n@@end\n",
		want: Node{
			NodeInfo: compute.NodeInfo{Hostname: "gpu1", OS: "Debian GNU/Linux 12 (bookworm)", Arch: "amd64", Kernel: "6.1.0",
				Cores: 8, MemoryBytes: 16384 << 10},
			Home: "/home/u", Bash: "/usr/bin/bash", Docker: "/usr/bin/docker", NvidiaSMI: "/usr/bin/nvidia-smi",
			GPUError: "nvidia-smi exited 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
		},
	}, {
		name: "no os-release, podman answers",
		out:  "@@uname\nDarwin\n23.0\narm64\n@@path bash\n@@path podman\n/opt/podman\n@@engine podman\n0\n@@end\n",
		want: Node{NodeInfo: compute.NodeInfo{OS: "Darwin", Kernel: "23.0", Arch: "arm64", ContainerRuntime: "podman"}, Podman: "/opt/podman"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseNode(tt.out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Error(diff)
			}
		})
	}
	if _, err := parseNode("@@uname\nLinux\n"); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("truncated output: err = %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	got, err := Fingerprint("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl x")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "SHA256:") || !strings.HasSuffix(got, " (ssh-ed25519)") {
		t.Errorf("Fingerprint = %q", got)
	}
	if _, err := Fingerprint("nonsense"); err == nil {
		t.Error("want error for a bad key")
	}
}
