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
