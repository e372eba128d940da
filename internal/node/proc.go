package node

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcStat is what Hangar reads of a process from /proc/<pid>/stat.
type ProcStat struct {
	PID   int
	State byte // R, S, D, Z, T, ...
	PPID  int
	PGRP  int
	// StartTime is clock ticks after boot (field 22): with the pid, it names one process, so a
	// reused pid is not mistaken for it.
	StartTime uint64
}

// Stat reads a process's /proc/<pid>/stat; ok is false when it is gone.
func Stat(pid int) (ProcStat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ProcStat{}, false
	}
	return parseStat(pid, string(b))
}

// parseStat parses a stat line. The command name (field 2) may hold spaces and parentheses, so
// the fields after it are found from the last ')'.
func parseStat(pid int, s string) (ProcStat, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ProcStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return ProcStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return ProcStat{PID: pid, State: f[0][0], PPID: ppid, PGRP: pgrp, StartTime: start}, true
}

// ProcessStartTime reads a process's start time so that a reused pid is not mistaken for the
// process; 0 when it is gone or a zombie.
func ProcessStartTime(pid int) uint64 {
	st, ok := Stat(pid)
	if !ok || st.State == 'Z' {
		return 0
	}
	return st.StartTime
}

// PIDs lists the processes this machine has now (those /proc shows).
func PIDs() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}
