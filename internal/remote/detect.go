package remote

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/node"
)

// Node is what Detect learns about a host.
type Node struct {
	compute.NodeInfo
	Home string // absolute home directory, where relative paths start
	// Paths of the tools found on the host's PATH, "" when absent.
	Bash, Docker, Podman, NvidiaSMI string
	// GPUError is why nvidia-smi, present, gave no GPUs.
	GPUError string
}

// detectScript prints one "@@section" line before each fact, for parseNode. It runs with any POSIX sh.
var detectScript = `
echo @@uname; uname -s; uname -r; uname -m
echo @@hostname; hostname 2>/dev/null || uname -n
echo @@home; pwd -P
echo @@cores; nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null
echo @@meminfo; cat /proc/meminfo 2>/dev/null
echo @@osrelease; cat /etc/os-release 2>/dev/null
for t in bash docker podman nvidia-smi; do echo "@@path $t"; command -v $t 2>/dev/null; done
for t in podman docker; do
  if command -v $t >/dev/null 2>&1; then
    echo "@@engine $t"
    if command -v timeout >/dev/null 2>&1; then timeout 10 $t info >/dev/null 2>&1; else $t info >/dev/null 2>&1; fi; echo $?
  fi
done
if command -v nvidia-smi >/dev/null 2>&1; then
  echo @@gpus; nvidia-smi ` + strings.Join(node.NvidiaSMIQuery, " ") + ` 2>&1; echo "@@gpuexit $?"
fi
echo @@end
`

// Detect learns the host's OS, kernel, architecture, cores, memory, GPUs (nvidia-smi), container
// engines and whether bash is there, with one command. A host without bash is refused: the node is
// returned with an error that is ErrUnsupported and says why in one line.
func Detect(ctx context.Context, r Runner) (*Node, error) {
	out, err := Output(ctx, r, detectScript)
	if err != nil {
		return nil, fmt.Errorf("detect node: %w", err)
	}
	n, err := parseNode(string(out))
	if err != nil {
		return nil, fmt.Errorf("detect node: %w", err)
	}
	if n.Bash == "" {
		return n, fmt.Errorf("%w: no bash on the host's PATH (jobs run with bash -c); install bash", ErrUnsupported)
	}
	return n, nil
}

// parseNode reads detectScript's output.
func parseNode(out string) (*Node, error) {
	sections := map[string][]string{}
	var cur string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "@@") {
			cur = strings.TrimPrefix(l, "@@")
			sections[cur] = []string{}
			continue
		}
		if cur != "" {
			sections[cur] = append(sections[cur], l)
		}
	}
	if _, ok := sections["end"]; !ok {
		return nil, fmt.Errorf("detection output cut short: %q", lastLines(out, 3))
	}
	first := func(k string) string {
		for _, l := range sections[k] {
			if l = strings.TrimSpace(l); l != "" {
				return l
			}
		}
		return ""
	}
	n := &Node{}
	uname := nonEmpty(sections["uname"])
	if len(uname) >= 3 {
		n.OS, n.Kernel, n.Arch = uname[0], uname[1], goArch(uname[2])
	}
	if v := node.ParseOSRelease(strings.Join(sections["osrelease"], "\n")); v != "" {
		n.OS = v
	}
	n.Hostname, n.Home = first("hostname"), first("home")
	n.Cores, _ = strconv.Atoi(first("cores"))
	n.MemoryBytes, _ = node.ParseMeminfo(strings.Join(sections["meminfo"], "\n"))
	n.Bash, n.Docker, n.Podman, n.NvidiaSMI = first("path bash"), first("path docker"), first("path podman"), first("path nvidia-smi")
	for _, engine := range []string{"podman", "docker"} { // as node.ContainerRuntime: an engine that answers
		if first("engine "+engine) == "0" {
			n.ContainerRuntime = engine
			break
		}
	}
	if gpus, ok := sections["gpus"]; ok {
		text := strings.Join(gpus, "\n")
		code := "?"
		for k := range sections {
			if c, ok := strings.CutPrefix(k, "gpuexit "); ok {
				code = c
			}
		}
		if code != "0" {
			n.GPUError = fmt.Sprintf("nvidia-smi exited %s: %s", code, lastLines(text, 1))
		} else if g, err := node.ParseNvidiaSMI(text); err != nil {
			n.GPUError = err.Error()
		} else {
			n.GPUs = g
		}
	}
	return n, nil
}

func nonEmpty(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// goArch maps uname -m to Go's GOARCH names, as the local node reports them.
func goArch(m string) string {
	switch m {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	case "i386", "i486", "i586", "i686":
		return "386"
	case "armv6l", "armv7l":
		return "arm"
	}
	return m
}
