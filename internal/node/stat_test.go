package node

import (
	"os"
	"testing"
)

// ParseStat is the one reader of /proc/<pid>/stat text, for this machine and (through the remote
// package) for hosts reached over SSH.
func TestParseStatText(t *testing.T) {
	tests := []struct {
		name, in string
		want     ProcStat
		ok       bool
		running  bool
	}{
		{"plain", "4242 (sleep) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 5000 100\n",
			ProcStat{PID: 4242, State: 'S', PPID: 1, PGRP: 4242, StartTime: 987654}, true, true},
		{"name with spaces and parens", "7 (a (weird) name) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0",
			ProcStat{PID: 7, State: 'Z', PPID: 1, PGRP: 7, StartTime: 55}, true, false},
		{"dead task", "8 (x) X 1 8 8 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 56 0 0",
			ProcStat{PID: 8, State: 'X', PPID: 1, PGRP: 8, StartTime: 56}, true, false},
		// A start time of 0 would match any process with the pid.
		{"start time not a number", "9 (x) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ? 0 0", ProcStat{}, false, false},
		{"no pid", "(x) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", ProcStat{}, false, false},
		{"garbage", "garbage", ProcStat{}, false, false},
		{"truncated", "1 (x) S 1 2 3", ProcStat{}, false, false},
	}
	for _, tt := range tests {
		got, ok := ParseStat(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: ParseStat = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
		if ok && got.Running() != tt.running {
			t.Errorf("%s: Running() = %v, want %v", tt.name, got.Running(), tt.running)
		}
	}
}

// Ancestry holds this process and its parent chain, and never init.
func TestAncestry(t *testing.T) {
	a := Ancestry()
	if !a[os.Getpid()] || !a[os.Getppid()] && os.Getppid() > 1 {
		t.Errorf("Ancestry() = %v, want this process %d and its parent %d", a, os.Getpid(), os.Getppid())
	}
	if a[1] || a[0] {
		t.Errorf("Ancestry() holds init or 0: %v", a)
	}
}
