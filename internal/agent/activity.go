package agent

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// ActivityEvery is how often an agent reports its node's activity (a compute instance's idle
// judgement reads it; older than a few minutes, it no longer counts).
const ActivityEvery = 15 * time.Second

// activityMeter reads the node's activity from /proc: sshd's per-session processes, Jupyter
// kernels, CPU use since its last reading, and GPU use through nvidia-smi where there is one.
type activityMeter struct {
	last          time.Time
	busy, total   uint64
	proc          string // "" is /proc
	noNvidiaSMI   bool
	nvidiaChecked bool
}

// report is the activity to send now, or nil when the last report is recent.
func (m *activityMeter) report(now time.Time) *api.NodeActivity {
	if !m.last.IsZero() && now.Sub(m.last) < ActivityEvery {
		return nil
	}
	m.last = now
	root := m.proc
	if root == "" {
		root = "/proc"
	}
	a := &api.NodeActivity{}
	a.SSHSessions, a.JupyterKernels = countSessions(root)
	if busy, total, ok := readCPU(root); ok {
		if m.total > 0 && total > m.total {
			a.CPUPercent = 100 * float64(busy-min(busy, m.busy)) / float64(total-m.total)
		}
		m.busy, m.total = busy, total
	}
	a.GPUPercent, a.HasGPU = m.gpu()
	return a
}

// countSessions counts sshd session processes and Jupyter kernels among the node's processes.
func countSessions(proc string) (ssh, kernels int) {
	entries, _ := os.ReadDir(proc)
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join(proc, e.Name(), "cmdline"))
		if err != nil || len(cmd) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		switch {
		case strings.HasPrefix(args[0], "sshd: ") && strings.Contains(args[0], "@"):
			ssh++ // sshd names a session's process after its user and terminal
		case isKernel(args):
			kernels++
		}
	}
	return ssh, kernels
}

func isKernel(args []string) bool {
	for _, a := range args {
		if a == "ipykernel_launcher" || strings.HasSuffix(a, "ipykernel_launcher.py") || a == "ipykernel" {
			return true
		}
	}
	return false
}

// readCPU reads the node's busy and total CPU time (jiffies) from /proc/stat.
func readCPU(proc string) (busy, total uint64, ok bool) {
	data, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i != 3 && i != 4 { // idle and iowait
			busy += v
		}
	}
	return busy, total, true
}

// gpu is the busiest GPU's use, from nvidia-smi when the node has it.
func (m *activityMeter) gpu() (float64, bool) {
	if !m.nvidiaChecked {
		_, err := exec.LookPath("nvidia-smi")
		m.noNvidiaSMI, m.nvidiaChecked = err != nil, true
	}
	if m.noNvidiaSMI {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return 0, false
	}
	best, any := 0.0, false
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if v, err := strconv.ParseFloat(strings.TrimSpace(l), 64); err == nil {
			best, any = max(best, v), true
		}
	}
	return best, any
}
