package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/backend/local"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

func TestOffer(t *testing.T) {
	gpus := []compute.GPU{{Index: 0, Name: "A"}, {Index: 1, Name: "B"}, {Index: 2, Name: "C"}}
	n := &compute.NodeInfo{Cores: 8, MemoryBytes: 32 * resources.Gi, GPUs: gpus}
	tests := []struct {
		name     string
		node     *compute.NodeInfo
		slice    Slice
		want     resources.Vector
		wantGPUs []compute.GPU
		err      string
	}{
		{"whole machine", n, Slice{}, resources.Vector{MilliCPU: 8000, Memory: 32 * resources.Gi, GPU: 3}, gpus, ""},
		{"a slice", n, Slice{MilliCPU: 2500, Memory: 4 * resources.Gi, GPUs: []int{2, 0}},
			resources.Vector{MilliCPU: 2500, Memory: 4 * resources.Gi, GPU: 2}, []compute.GPU{gpus[2], gpus[0]}, ""},
		{"no gpus", n, Slice{GPUs: []int{}}, resources.Vector{MilliCPU: 8000, Memory: 32 * resources.Gi}, nil, ""},
		{"missing gpu", n, Slice{GPUs: []int{5}}, resources.Vector{}, nil, "no GPU 5 (it has 0,1,2)"},
		{"unknown memory", &compute.NodeInfo{Cores: 2}, Slice{}, resources.Vector{}, nil, "nothing to offer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Offer(tt.node, tt.slice, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Capacity != tt.want || !cmp.Equal(got.GPUs, tt.wantGPUs) {
				t.Errorf("Offer = %s %v, want %s %v", got.Capacity, got.GPUs, tt.want, tt.wantGPUs)
			}
		})
	}
}

func TestParseGPUs(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"all", nil, false},
		{"none", []int{}, false},
		{"0, 2,2", []int{0, 2}, false},
		{"x", nil, true},
		{"-1", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseGPUs(tt.in)
		if (err != nil) != tt.err || !cmp.Equal(got, tt.want) || (tt.want != nil && got == nil) {
			t.Errorf("ParseGPUs(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// The agent stops reporting a run the server told it to forget only once the run ended: a run
// still alive is reported whatever the server says.
func TestForgetOnlyEndedRuns(t *testing.T) {
	r := &runs{sup: &local.Backend{Root: t.TempDir()}, known: map[string]*runEntry{
		"ended": {endedAt: time.Unix(1, 0)},
		"alive": {},
	}}
	r.forget([]string{"ended", "alive", "unknown"})
	if _, ok := r.known["ended"]; ok {
		t.Error("the ended run is still reported")
	}
	if _, ok := r.known["alive"]; !ok {
		t.Error("the alive run was forgotten")
	}
}
