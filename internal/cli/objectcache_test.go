package cli

import "testing"

func TestObjectCacheSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"50Gi", 50 << 30, false},
		{"1T", 1e12, false},
		{"unlimited", -1, false},
		{"0", 0, true},
		{"-5Gi", 0, true},
		{"lots", 0, true},
	} {
		var s ObjectCacheSize
		err := s.Set(tt.in)
		if (err != nil) != tt.bad || int64(s) != tt.want {
			t.Errorf("Set(%q) = %d, %v; want %d (error: %v)", tt.in, s, err, tt.want, tt.bad)
		}
	}
}
