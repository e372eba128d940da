package resources

import (
	"fmt"
	"strings"
)

// Core is one CPU core in millicores, the unit of Vector.MilliCPU.
const Core = 1000

// Binary memory units, in bytes.
const (
	Ki int64 = 1 << (10 * (iota + 1))
	Mi
	Gi
	Ti
	Pi
	Ei
)

// Vector is an amount of compute. CPU is counted in millicores (1 core = 1000) so that
// fractional requests such as "500m" or "0.5" stay exact integers; memory is in bytes.
// A zero Vector asks for nothing. Values are expected to be non-negative; Sub may make
// them negative, and a negative component fits nothing.
type Vector struct {
	MilliCPU int64 `json:"millicpu"`
	Memory   int64 `json:"memory"`
	GPU      int64 `json:"gpu"`
}

// Add returns v + o, component by component.
func (v Vector) Add(o Vector) Vector {
	return Vector{MilliCPU: v.MilliCPU + o.MilliCPU, Memory: v.Memory + o.Memory, GPU: v.GPU + o.GPU}
}

// Sub returns v - o, component by component; the result may be negative.
func (v Vector) Sub(o Vector) Vector {
	return Vector{MilliCPU: v.MilliCPU - o.MilliCPU, Memory: v.Memory - o.Memory, GPU: v.GPU - o.GPU}
}

// Fits reports whether v fits within capacity: no component of v exceeds capacity's.
func (v Vector) Fits(capacity Vector) bool {
	return v.MilliCPU <= capacity.MilliCPU && v.Memory <= capacity.Memory && v.GPU <= capacity.GPU
}

// IsZero reports whether every component is zero.
func (v Vector) IsZero() bool {
	return v == Vector{}
}

// Scale returns v multiplied by n, component by component.
func (v Vector) Scale(n int64) Vector {
	return Vector{MilliCPU: v.MilliCPU * n, Memory: v.Memory * n, GPU: v.GPU * n}
}

// String renders v for people, e.g. "4 cores, 16Gi, 1 GPU".
func (v Vector) String() string {
	parts := []string{FormatCPU(v.MilliCPU) + " cores", FormatMemory(v.Memory)}
	switch v.GPU {
	case 0:
	case 1:
		parts = append(parts, "1 GPU")
	default:
		parts = append(parts, fmt.Sprintf("%d GPUs", v.GPU))
	}
	return strings.Join(parts, ", ")
}
