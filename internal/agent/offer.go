package agent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

// Slice is the part of its machine an agent offers; zero fields mean all of it.
type Slice struct {
	MilliCPU int64
	Memory   int64
	// GPUs are the indices offered; nil means every GPU found, an empty non-nil slice none.
	GPUs []int
}

// Offer is what an agent on machine n offers with slice s. Several agents on one machine
// each offer their own slice; a GPU index the machine lacks is an error.
func Offer(n *compute.NodeInfo, s Slice, labels map[string]string) (api.AgentInfo, error) {
	in := api.AgentInfo{Node: n, Labels: labels,
		Capacity: resources.Vector{MilliCPU: int64(n.Cores) * resources.Core, Memory: n.MemoryBytes}}
	if s.MilliCPU > 0 {
		in.Capacity.MilliCPU = s.MilliCPU
	}
	if s.Memory > 0 {
		in.Capacity.Memory = s.Memory
	}
	switch {
	case s.GPUs == nil:
		in.GPUs = n.GPUs
	default:
		for _, i := range s.GPUs {
			k := slices.IndexFunc(n.GPUs, func(g compute.GPU) bool { return g.Index == i })
			if k < 0 {
				return in, fmt.Errorf("--gpus: this machine has no GPU %d (it has %s)", i, gpuList(n.GPUs))
			}
			in.GPUs = append(in.GPUs, n.GPUs[k])
		}
	}
	in.Capacity.GPU = int64(len(in.GPUs))
	if in.Capacity.MilliCPU <= 0 || in.Capacity.Memory <= 0 {
		return in, fmt.Errorf("nothing to offer: %s (set --cores and --memory)", in.Capacity)
	}
	return in, nil
}

// ParseGPUs reads --gpus: "all" (or "") for every GPU, "none" for none, else "0,1,3".
func ParseGPUs(s string) ([]int, error) {
	switch strings.TrimSpace(s) {
	case "", "all":
		return nil, nil
	case "none":
		return []int{}, nil
	}
	out := []int{}
	for _, f := range strings.Split(s, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 {
			return nil, fmt.Errorf("--gpus: %q is not a GPU index (want all, none, or a list like 0,1)", f)
		}
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out, nil
}

// VisibleDevices is CUDA_VISIBLE_DEVICES for the GPUs offered.
func VisibleDevices(gpus []compute.GPU) string {
	ids := make([]string, len(gpus))
	for i, g := range gpus {
		ids[i] = strconv.Itoa(g.Index)
	}
	return strings.Join(ids, ",")
}

func gpuList(gpus []compute.GPU) string {
	if len(gpus) == 0 {
		return "none"
	}
	return VisibleDevices(gpus)
}
