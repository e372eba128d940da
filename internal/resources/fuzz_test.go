package resources

import (
	"strconv"
	"testing"
)

// FuzzParseMemory checks that ParseMemory never panics, never returns a negative amount,
// agrees with strconv on plain integers, and reads FormatMemory's output back exactly.
func FuzzParseMemory(f *testing.F) {
	for _, s := range []string{"16Gi", "512Mi", "4G", "1.5Gi", "0.5", "1024", "", ".", "8Ei", "1e3", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMemory(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("ParseMemory(%q) = %d < 0", s, v)
		}
		if n, perr := strconv.ParseInt(s, 10, 64); perr == nil && n >= 0 && n != v {
			t.Fatalf("ParseMemory(%q) = %d, strconv says %d", s, v, n)
		}
		back, err := ParseMemory(FormatMemory(v))
		if err != nil || back != v {
			t.Fatalf("round trip of %d via %q = %d, %v", v, FormatMemory(v), back, err)
		}
	})
}

// FuzzParseCPU checks the same properties for ParseCPU and FormatCPU.
func FuzzParseCPU(f *testing.F) {
	for _, s := range []string{"2", "500m", "0.5", "1.25", "0.0001", "", "m", "2 cores"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseCPU(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("ParseCPU(%q) = %d < 0", s, v)
		}
		back, err := ParseCPU(FormatCPU(v))
		if err != nil || back != v {
			t.Fatalf("round trip of %d via %q = %d, %v", v, FormatCPU(v), back, err)
		}
	})
}
