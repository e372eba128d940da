package node

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hangar-ml/hangar/internal/compute"
)

func TestParseMeminfo(t *testing.T) {
	got, err := ParseMeminfo("MemFree: 10 kB\nMemTotal:       24682512 kB\n")
	if err != nil || got != 24682512*1024 {
		t.Errorf("ParseMeminfo = %d, %v", got, err)
	}
	if _, err := ParseMeminfo("nothing"); err == nil {
		t.Error("want error without MemTotal")
	}
}

func TestParseOSRelease(t *testing.T) {
	tests := []struct{ in, want string }{
		{"PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian\"", "Debian GNU/Linux 12 (bookworm)"},
		{"NAME=Alpine\nVERSION=3.19", "Alpine 3.19"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ParseOSRelease(tt.in); got != tt.want {
			t.Errorf("ParseOSRelease(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseNvidiaSMI(t *testing.T) {
	in := "0, NVIDIA H100 80GB HBM3, 81559, GPU-abc\n1, NVIDIA H100 80GB HBM3, 81559, GPU-def\n"
	got, err := ParseNvidiaSMI(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []compute.GPU{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, UUID: "GPU-abc"},
		{Index: 1, Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, UUID: "GPU-def"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if _, err := ParseNvidiaSMI("x, y"); err == nil {
		t.Error("want error for a bad index")
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, in string
		want     ProcStat
		ok       bool
	}{
		{"plain", "42 (sleep) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 12345 1000 10",
			ProcStat{PID: 42, State: 'S', PPID: 1, PGRP: 42, StartTime: 12345}, true},
		{"name with spaces and parens", "7 (a) b (c) R 3 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
			ProcStat{PID: 7, State: 'R', PPID: 3, PGRP: 5, StartTime: 99}, true},
		{"zombie", "9 (x) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0",
			ProcStat{PID: 9, State: 'Z', PPID: 1, PGRP: 9, StartTime: 5}, true},
		{"truncated", "9 (x) S 1 9", ProcStat{}, false},
		{"no name", "garbage", ProcStat{}, false},
	}
	for _, tt := range tests {
		got, ok := parseStat(tt.want.PID, tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: parseStat = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
