package serving

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTraffic(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]int
		err  string
	}{
		{in: "blue=90 green=10", want: map[string]int{"blue": 90, "green": 10}},
		{in: "blue=90,green=10", want: map[string]int{"blue": 90, "green": 10}},
		{in: "  blue=100  ", want: map[string]int{"blue": 100}},
		{in: "", want: map[string]int{}},
		{in: "blue=90 green", err: `traffic "green": expected <deployment>=<percent>`},
		{in: "=5", err: `traffic "=5": expected <deployment>=<percent>`},
		{in: "blue=abc", err: `traffic "blue=abc": expected a whole percentage from 0 to 100, got "abc"`},
		{in: "blue=101", err: `traffic "blue=101": expected a whole percentage`},
		{in: "blue=-1", err: `traffic "blue=-1": expected a whole percentage`},
		{in: "blue=50 blue=50", err: `traffic "blue=50": deployment blue named twice`},
	} {
		got, err := ParseTraffic(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTraffic(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTraffic(%q): %v", tc.in, err)
		} else if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParseTraffic(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestCheckTraffic(t *testing.T) {
	deps := []string{"blue", "green", "shadow"}
	for _, tc := range []struct {
		name            string
		traffic, mirror map[string]int
		want            []string // substrings, "" for no error
	}{
		{"split", map[string]int{"blue": 90, "green": 10}, nil, nil},
		{"empty", nil, nil, nil},
		{"all zero", map[string]int{"blue": 0, "green": 0}, nil, nil},
		{"mirror", map[string]int{"blue": 100}, map[string]int{"shadow": 50}, nil},
		{"sum", map[string]int{"blue": 90, "green": 20}, nil, []string{"traffic: percentages sum to 110, expected 100 (or all 0)"}},
		{"unknown", map[string]int{"blue": 90, "red": 10}, nil, []string{"traffic.red: no deployment red on this endpoint (deployments: blue, green, shadow)"}},
		{"mirror too much", map[string]int{"blue": 100}, map[string]int{"shadow": 60}, []string{"mirror_traffic.shadow: 60% is out of range, expected 0 to 50"}},
		{"live and mirror", map[string]int{"blue": 90, "green": 10}, map[string]int{"green": 10},
			[]string{"mirror_traffic.green: deployment green takes 10% of live traffic"}},
		{"mirror unknown", map[string]int{"blue": 100}, map[string]int{"red": 10}, []string{"mirror_traffic.red: no deployment red"}},
		{"every problem", map[string]int{"blue": 50, "red": 10}, map[string]int{"green": 70},
			[]string{"traffic.red", "traffic: percentages sum to 60", "mirror_traffic.green: 70%"}},
	} {
		err := CheckTraffic(tc.traffic, tc.mirror, deps)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.name, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
}

func TestChoose(t *testing.T) {
	split := map[string]int{"green": 10, "blue": 90}
	for _, tc := range []struct {
		traffic map[string]int
		u       float64
		want    string
	}{
		{split, 0, "blue"},
		{split, 0.8999, "blue"},
		{split, 0.9, "green"},
		{split, 0.99999, "green"},
		{split, 1, "green"}, // a bad draw still names a deployment with traffic
		{map[string]int{"a": 0, "b": 100}, 0, "b"},
		{map[string]int{"a": 0, "b": 0}, 0.5, ""},
		{nil, 0.5, ""},
		{map[string]int{"a": 50, "b": 50}, 0.5, "b"},
	} {
		if got := Choose(tc.traffic, tc.u); got != tc.want {
			t.Errorf("Choose(%v, %v) = %q, want %q", tc.traffic, tc.u, got, tc.want)
		}
	}
}

// Equally spaced draws over [0, 1) give each deployment exactly its share: the split is exact
// in expectation, not approximately so.
func TestChooseExactShares(t *testing.T) {
	split := map[string]int{"blue": 90, "green": 7, "red": 3}
	const n = 10000
	got := map[string]int{}
	for i := range n {
		got[Choose(split, float64(i)/n)]++
	}
	if d := cmp.Diff(map[string]int{"blue": 9000, "green": 700, "red": 300}, got); d != "" {
		t.Fatalf("shares over %d equally spaced draws (-want +got):\n%s", n, d)
	}
}

func TestMirrors(t *testing.T) {
	draws := func(us ...float64) func() float64 {
		return func() float64 { u := us[0]; us = us[1:]; return u }
	}
	m := map[string]int{"a": 20, "b": 50, "off": 0}
	if d := cmp.Diff([]string{"a"}, Mirrors(m, draws(0.1, 0.5))); d != "" {
		t.Errorf("a drawn, b not (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b"}, Mirrors(m, draws(0.2, 0.49))); d != "" {
		t.Errorf("b drawn, a not (-want +got):\n%s", d)
	}
	if got := Mirrors(nil, nil); got != nil {
		t.Errorf("no mirror: %v", got)
	}
}
