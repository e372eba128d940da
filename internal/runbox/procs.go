package runbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/node"
)

// MarkerVar is the variable every process of a run's box carries, with a value made for the box
// and kept in its record: a process that left the run's cgroup or process group is still found
// by it, and no other process has it (a run id would not do: tests and retries reuse them).
const MarkerVar = "HANGAR_BOX"

// marked lists the processes whose environment carries a box's marker.
func marked(marker string) []int {
	if marker == "" {
		return nil
	}
	want := []byte(MarkerVar + "=" + marker)
	var out []int
	for _, pid := range node.PIDs() {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// groupMembers lists the processes of a process group.
func groupMembers(pgid int) []int {
	var out []int
	for _, pid := range node.PIDs() {
		if st, ok := node.Stat(pid); ok && st.PGRP == pgid && st.State != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// ancestry is this process and its ancestors, and init: never killed, whatever their
// environment says (a supervisor started from inside a run's shell inherits the marker).
func ancestry() map[int]bool {
	keep := node.Ancestry()
	keep[1] = true
	return keep
}

func killEach(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// waitGone waits until the processes have exited (or are zombies), at most d.
func waitGone(pids []int, d time.Duration) {
	deadline := time.Now().Add(d)
	for _, p := range pids {
		for time.Now().Before(deadline) {
			if st, ok := node.Stat(p); !ok || st.State == 'Z' {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
