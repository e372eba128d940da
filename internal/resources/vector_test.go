package resources

import "testing"

func TestVectorArithmetic(t *testing.T) {
	a := Vector{MilliCPU: 4 * Core, Memory: 16 * Gi, GPU: 1}
	b := Vector{MilliCPU: 500, Memory: 512 * Mi}
	if got, want := a.Add(b), (Vector{MilliCPU: 4500, Memory: 16*Gi + 512*Mi, GPU: 1}); got != want {
		t.Errorf("Add = %v, want %v", got, want)
	}
	if got := a.Add(b).Sub(b); got != a {
		t.Errorf("Add then Sub = %v, want %v", got, a)
	}
	if got, want := b.Scale(3), (Vector{MilliCPU: 1500, Memory: 1536 * Mi}); got != want {
		t.Errorf("Scale = %v, want %v", got, want)
	}
	if !(Vector{}).IsZero() || a.IsZero() || (Vector{GPU: 1}).IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestFits(t *testing.T) {
	node := Vector{MilliCPU: 8 * Core, Memory: 32 * Gi, GPU: 2}
	tests := []struct {
		name string
		req  Vector
		want bool
	}{
		{"zero", Vector{}, true},
		{"exact", node, true},
		{"smaller", Vector{MilliCPU: 500, Memory: Gi}, true},
		{"one millicore too many", Vector{MilliCPU: 8*Core + 1}, false},
		{"one byte too many", Vector{Memory: 32*Gi + 1}, false},
		{"one gpu too many", Vector{GPU: 3}, false},
	}
	for _, tt := range tests {
		if got := tt.req.Fits(node); got != tt.want {
			t.Errorf("%s: %v.Fits(%v) = %v, want %v", tt.name, tt.req, node, got, tt.want)
		}
	}
	if (Vector{}).Fits(Vector{GPU: -1}) {
		t.Error("nothing fits a negative capacity")
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		v    Vector
		want string
	}{
		{Vector{MilliCPU: 4 * Core, Memory: 16 * Gi, GPU: 1}, "4 cores, 16Gi, 1 GPU"},
		{Vector{MilliCPU: 1500, Memory: 512 * Mi, GPU: 2}, "1.5 cores, 512Mi, 2 GPUs"},
		{Vector{}, "0 cores, 0"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
