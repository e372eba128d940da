package cluster

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
)

func TestRequest(t *testing.T) {
	node := sizes.Size{Name: "gpu-4", Cores: 24, MemoryBytes: 448 * resources.Gi, GPUs: 4}
	cpu := sizes.Size{Name: "cpu-4", Cores: 4, MemoryBytes: 16 * resources.Gi}
	tests := []struct {
		name  string
		size  sizes.Size
		props map[string]any
		want  resources.Vector
	}{
		{"no request: the whole node, as on Azure", node, nil, node.Vector()},
		{"cores only: memory scales with the share", cpu, map[string]any{"cores": 0.25},
			resources.Vector{MilliCPU: 250, Memory: resources.Gi}},
		{"cores as a string", cpu, map[string]any{"cores": "500m"},
			resources.Vector{MilliCPU: 500, Memory: 2 * resources.Gi}},
		{"memory only: cores scale with the share", cpu, map[string]any{"memory": "8Gi"},
			resources.Vector{MilliCPU: 2000, Memory: 8 * resources.Gi}},
		{"the largest share wins", cpu, map[string]any{"cores": 1, "memory": "12Gi"},
			resources.Vector{MilliCPU: 1000, Memory: 12 * resources.Gi}},
		{"gpus only: cores and memory per GPU", node, map[string]any{"gpus": 1},
			resources.Vector{MilliCPU: 6000, Memory: 112 * resources.Gi, GPU: 1}},
		{"gpus not named are not taken", node, map[string]any{"cores": 12},
			resources.Vector{MilliCPU: 12000, Memory: 224 * resources.Gi}},
		{"shares round down", sizes.Size{Cores: 3, MemoryBytes: 1000}, map[string]any{"cores": 1},
			resources.Vector{MilliCPU: 1000, Memory: 333}},
		{"more than the node counts as the whole of it", cpu, map[string]any{"cores": 8},
			resources.Vector{MilliCPU: 8000, Memory: 16 * resources.Gi}},
		{"a value that does not parse is not named", cpu, map[string]any{"cores": "lots", "memory": "4Gi"},
			resources.Vector{MilliCPU: 1000, Memory: 4 * resources.Gi}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := job.Spec{Resources: job.Resources{Properties: tt.props}}
			if got := request(sp, tt.size); got != tt.want {
				t.Errorf("request = %s, want %s", got, tt.want)
			}
		})
	}
}

// However many small runs are packed by what they name, they fit the node in every dimension.
func TestSmallRequestsPackWithoutOvercommit(t *testing.T) {
	size := sizes.Size{Cores: 7, MemoryBytes: 13*resources.Gi + 5, GPUs: 3}
	for _, cores := range []string{"100m", "333m", "1", "1.5", "7"} {
		per := request(job.Spec{Resources: job.Resources{Properties: map[string]any{"cores": cores}}}, size)
		n := size.Vector().MilliCPU / per.MilliCPU
		total := resources.Vector{MilliCPU: per.MilliCPU * n, Memory: per.Memory * n, GPU: per.GPU * n}
		if !total.Fits(size.Vector()) {
			t.Errorf("cores %s: %d runs take %s of %s", cores, n, total, size.Vector())
		}
	}
}
