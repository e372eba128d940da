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

// ParseStat parses the text of a /proc/<pid>/stat file, read here or on another host (the
// remote package reads it over SSH): the one parser of that format.
func ParseStat(s string) (ProcStat, bool) {
	first, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	pid, err := strconv.Atoi(first)
	if err != nil || pid <= 0 {
		return ProcStat{}, false
	}
	return parseStat(pid, s)
}

// parseStat parses a stat line. The command name (field 2) may hold spaces and parentheses, so
// the fields after it are found from the last ')'. A start time that is not a number makes the
// line unreadable: a start time of 0 would match any process.
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
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return ProcStat{}, false
	}
	return ProcStat{PID: pid, State: f[0][0], PPID: ppid, PGRP: pgrp, StartTime: start}, true
}

// Running reports whether the process still runs: a zombie (Z) or a dead task (X) has ended.
func (s ProcStat) Running() bool { return s.State != 'Z' && s.State != 'X' }

// ProcessStartTime reads a process's start time so that a reused pid is not mistaken for the
// process; 0 when it is gone or a zombie.
func ProcessStartTime(pid int) uint64 {
	st, ok := Stat(pid)
	if !ok || !st.Running() {
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

// Ancestry is this process and its ancestors up to (not including) init, by pid: processes a
// sweep that kills by marker or name must never kill (a supervisor started from inside a run's
// shell inherits the run's marker; a test binary is the child of `go test`).
func Ancestry() map[int]bool {
	keep := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !keep[pid]; {
		keep[pid] = true
		st, ok := Stat(pid)
		if !ok {
			break
		}
		pid = st.PPID
	}
	return keep
}
