package sizes

import (
	"errors"
	"fmt"
	"github.com/hangar-ml/hangar/internal/pattern"
	"strings"

	"github.com/hangar-ml/hangar/internal/resources"
)

// Where a size comes from.
const (
	SourceBuiltin   = "builtin"   // a cloud size Hangar knows
	SourceMachine   = "machine"   // a slice of the server's machine (local-*)
	SourceWorkspace = "workspace" // defined by the workspace (hangar compute add-size)
)

// Size is one node shape.
type Size struct {
	Name        string `json:"name"`
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes"`
	GPUs        int    `json:"gpus"`
	GPUModel    string `json:"gpu_model,omitempty"`
	// PricePerHour is an indicative on-demand price in USD, for cost estimates only.
	PricePerHour float64 `json:"price_per_hour"`
	// Family is the quota family the size's cores count against.
	Family string `json:"family"`
	// Isolated marks a size whose nodes are never shared: a run of it gets nodes that run
	// nothing else (no packing of runs that would fit together).
	Isolated bool   `json:"isolated"`
	Source   string `json:"source,omitempty"`
}

// Vector is what one node of this size offers.
func (s Size) Vector() resources.Vector {
	return resources.Vector{MilliCPU: int64(s.Cores) * resources.Core, Memory: s.MemoryBytes, GPU: int64(s.GPUs)}
}

// String renders the shape for people, e.g. "Standard_NC6s_v3 (6 cores, 112Gi, 1 GPU V100)".
func (s Size) String() string {
	v := s.Vector().String()
	if s.GPUs > 0 && s.GPUModel != "" {
		v += " " + s.GPUModel
	}
	return fmt.Sprintf("%s (%s)", s.Name, v)
}

var nameRE = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// Validate checks a size a workspace defines; errors name the field.
func (s Size) Validate() error {
	var errs []error
	if !nameRE.MatchString(s.Name) {
		errs = append(errs, fmt.Errorf("name: %q must start with a letter or digit and hold only letters, digits, '_', '.' and '-'", s.Name))
	}
	if s.Cores < 1 {
		errs = append(errs, fmt.Errorf("cores: must be at least 1, got %d", s.Cores))
	}
	if s.MemoryBytes < resources.Mi {
		errs = append(errs, fmt.Errorf("memory: must be at least 1Mi, got %d bytes", s.MemoryBytes))
	}
	if s.GPUs < 0 {
		errs = append(errs, fmt.Errorf("gpus: must not be negative, got %d", s.GPUs))
	}
	if s.GPUs == 0 && s.GPUModel != "" {
		errs = append(errs, errors.New("gpu_model: set, but gpus is 0"))
	}
	if s.PricePerHour < 0 {
		errs = append(errs, fmt.Errorf("price_per_hour: must not be negative, got %g", s.PricePerHour))
	}
	if strings.TrimSpace(s.Family) == "" {
		errs = append(errs, errors.New("family: required (the quota family its cores count against)"))
	}
	return errors.Join(errs...)
}
