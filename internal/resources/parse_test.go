package resources

import (
	"strings"
	"testing"
)

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"16Gi", 16 * Gi, ""},
		{"512Mi", 512 * Mi, ""},
		{"4G", 4e9, ""},
		{"1024", 1024, ""},
		{" 2Ki ", 2048, ""},
		{"1.5Gi", 3 * Gi / 2, ""},
		{"0.5", 1, ""}, // half a byte rounds up
		{"1k", 1000, ""},
		{"7Ei", 7 * Ei, ""},
		{"0", 0, ""},
		{"8Ei", 0, "larger than"},
		{"", 0, "empty"},
		{"16g", 0, `unknown unit "g"`},
		{"512m", 0, `unknown unit "m"`},
		{"-1Gi", 0, `unknown unit "-1Gi"`},
		{"Gi", 0, "want a non-negative number"},
		{".", 0, "want a non-negative number"},
		{"1.2.3", 0, "want a non-negative number"},
		{"1e3", 0, `unknown unit "e3"`},
		{strings.Repeat("1", 65), 0, "longer than"},
	}
	for _, tt := range tests {
		got, err := ParseMemory(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMemory(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseCPU(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"2", 2000, ""},
		{"500m", 500, ""},
		{"0.5", 500, ""},
		{"1.25", 1250, ""},
		{"0.0001", 1, ""}, // finer than 1m rounds up
		{"2.", 2000, ""},
		{".5", 500, ""},
		{"", 0, "empty"},
		{"2 cores", 0, `unknown unit " cores"`},
		{"2Gi", 0, `unknown unit "Gi"`},
		{"m", 0, "want a non-negative number"},
		{"99999999999999999", 0, "larger than"},
	}
	for _, tt := range tests {
		got, err := ParseCPU(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCPU(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseCPU(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestErrorContext(t *testing.T) {
	_, err := ParseMemory("16g")
	if err == nil || !strings.HasPrefix(err.Error(), `parse memory "16g": `) {
		t.Errorf("err = %v, want the quantity named", err)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, m := range []int64{0, 1, 500, 999, 1000, 1001, 1500, 2000, 123456789} {
		got, err := ParseCPU(FormatCPU(m))
		if err != nil || got != m {
			t.Errorf("ParseCPU(FormatCPU(%d)=%q) = %d, %v", m, FormatCPU(m), got, err)
		}
	}
	for _, b := range []int64{0, 1, 1000, 1024, 512 * Mi, 16 * Gi, 16*Gi + 1, 7 * Ei} {
		got, err := ParseMemory(FormatMemory(b))
		if err != nil || got != b {
			t.Errorf("ParseMemory(FormatMemory(%d)=%q) = %d, %v", b, FormatMemory(b), got, err)
		}
	}
	if got := FormatCPU(1250); got != "1.25" {
		t.Errorf("FormatCPU(1250) = %q", got)
	}
}
