package sizes

import (
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

// Builtin returns the cloud sizes Hangar knows, with their real shapes. Prices are indicative
// pay-as-you-go USD per hour (Azure, East US, Linux), for estimates only.
func Builtin() []Size {
	gi := resources.Gi
	out := []Size{
		{Name: "Standard_DS3_v2", Cores: 4, MemoryBytes: 14 * gi, PricePerHour: 0.293, Family: "DSv2"},
		{Name: "Standard_DS4_v2", Cores: 8, MemoryBytes: 28 * gi, PricePerHour: 0.585, Family: "DSv2"},
		{Name: "Standard_D4s_v3", Cores: 4, MemoryBytes: 16 * gi, PricePerHour: 0.192, Family: "DSv3"},
		{Name: "Standard_D8s_v3", Cores: 8, MemoryBytes: 32 * gi, PricePerHour: 0.384, Family: "DSv3"},
		{Name: "Standard_D16s_v3", Cores: 16, MemoryBytes: 64 * gi, PricePerHour: 0.768, Family: "DSv3"},
		{Name: "Standard_E8s_v3", Cores: 8, MemoryBytes: 64 * gi, PricePerHour: 0.504, Family: "ESv3"},
		{Name: "Standard_NC4as_T4_v3", Cores: 4, MemoryBytes: 28 * gi, GPUs: 1, GPUModel: "T4", PricePerHour: 0.526, Family: "NCASv3_T4"},
		{Name: "Standard_NC6s_v3", Cores: 6, MemoryBytes: 112 * gi, GPUs: 1, GPUModel: "V100", PricePerHour: 3.06, Family: "NCSv3"},
		{Name: "Standard_NC12s_v3", Cores: 12, MemoryBytes: 224 * gi, GPUs: 2, GPUModel: "V100", PricePerHour: 6.12, Family: "NCSv3"},
		{Name: "Standard_NC24s_v3", Cores: 24, MemoryBytes: 448 * gi, GPUs: 4, GPUModel: "V100", PricePerHour: 12.24, Family: "NCSv3"},
		{Name: "Standard_NC24ads_A100_v4", Cores: 24, MemoryBytes: 220 * gi, GPUs: 1, GPUModel: "A100 80GB", PricePerHour: 3.673, Family: "NCADSA100v4"},
		{Name: "Standard_ND96asr_v4", Cores: 96, MemoryBytes: 900 * gi, GPUs: 8, GPUModel: "A100 40GB", PricePerHour: 27.197, Family: "NDASv4_A100"},
	}
	for i := range out {
		out[i].Source = SourceBuiltin
	}
	return out
}

// Machine is what the server's machine offers, the base of the local-* sizes.
type Machine struct {
	Cores       int
	MemoryBytes int64
	GPUs        int
	GPUModel    string
}

// MachineOf summarises a detected node (nil means nothing is known: one core, no memory).
func MachineOf(n *compute.NodeInfo) Machine {
	if n == nil {
		return Machine{Cores: 1}
	}
	m := Machine{Cores: n.Cores, MemoryBytes: n.MemoryBytes, GPUs: len(n.GPUs)}
	if len(n.GPUs) > 0 {
		m.GPUModel = n.GPUs[0].Name
	}
	return m
}

// Local returns the slices of this machine that the local provider can start agents for:
// local-quarter, local-half and local-full (a quarter, half or all of the cores, memory and
// GPUs, at least one core), and local-gpu (one GPU with its share of cores and memory) when
// the machine has GPUs. Their family is "local" and their price 0.
func Local(m Machine) []Size {
	if m.Cores < 1 {
		m.Cores = 1
	}
	slice := func(name string, div int) Size {
		s := Size{Name: name, Cores: max(1, m.Cores/div), MemoryBytes: m.MemoryBytes / int64(div),
			GPUs: m.GPUs / div, Family: "local", Source: SourceMachine}
		if s.GPUs > 0 {
			s.GPUModel = m.GPUModel
		}
		return s
	}
	out := []Size{slice("local-quarter", 4), slice("local-half", 2), slice("local-full", 1)}
	if m.GPUs > 0 {
		g := slice("local-gpu", m.GPUs)
		g.GPUs, g.GPUModel = 1, m.GPUModel
		out = append(out, g)
	}
	return out
}
