package serving

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// MaxMirrorPercent is the most of an endpoint's requests one deployment may be sent as copies
// (Azure's limit for mirror_traffic).
const MaxMirrorPercent = 50

// ParseTraffic reads the CLI's `--traffic "blue=90 green=10"` (or `--mirror-traffic`): pairs of
// deployment=percent separated by spaces or commas. An empty string is an empty split.
func ParseTraffic(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		name, pct, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("traffic %q: expected <deployment>=<percent>", pair)
		}
		n, err := strconv.Atoi(strings.TrimSpace(pct))
		if err != nil || n < 0 || n > 100 {
			return nil, fmt.Errorf("traffic %q: expected a whole percentage from 0 to 100, got %q", pair, pct)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("traffic %q: deployment %s named twice", pair, name)
		}
		out[name] = n
	}
	return out, nil
}

// CheckTraffic says what is wrong with an endpoint's traffic and mirror_traffic given its
// deployments: traffic sums to 100 or is all zero (or empty), every name is a deployment, no
// deployment both takes live traffic and receives copies, and no mirror exceeds
// MaxMirrorPercent. Every problem is reported, each naming its field path.
func CheckTraffic(traffic, mirror map[string]int, deployments []string) error {
	var errs []error
	sum := 0
	for _, name := range slices.Sorted(maps.Keys(traffic)) {
		pct := traffic[name]
		sum += pct
		errs = append(errs, checkEntry("traffic", name, pct, 100, deployments))
	}
	if sum != 0 && sum != 100 {
		errs = append(errs, fmt.Errorf("traffic: percentages sum to %d, expected 100 (or all 0)", sum))
	}
	for _, name := range slices.Sorted(maps.Keys(mirror)) {
		pct := mirror[name]
		errs = append(errs, checkEntry("mirror_traffic", name, pct, MaxMirrorPercent, deployments))
		if pct > 0 && traffic[name] > 0 {
			errs = append(errs, fmt.Errorf("mirror_traffic.%s: deployment %s takes %d%% of live traffic; a deployment is either live or a mirror", name, name, traffic[name]))
		}
	}
	return errors.Join(errs...)
}

func checkEntry(field, name string, pct, max int, deployments []string) error {
	if !slices.Contains(deployments, name) {
		return fmt.Errorf("%s.%s: no deployment %s on this endpoint (deployments: %s)", field, name, name, listOrNone(deployments))
	}
	if pct < 0 || pct > max {
		return fmt.Errorf("%s.%s: %d%% is out of range, expected 0 to %d", field, name, pct, max)
	}
	return nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(slices.Values(names)), ", ")
}

// Choose maps a uniform draw u in [0, 1) to a deployment: each gets the share of [0, 1) its
// percentage says, in name order, so a 90/10 split is exact in expectation and the same draw
// always gives the same deployment. It returns "" when no deployment has traffic.
func Choose(traffic map[string]int, u float64) string {
	total := 0
	for _, pct := range traffic {
		if pct > 0 {
			total += pct
		}
	}
	if total == 0 {
		return ""
	}
	x := u * float64(total)
	cum, last := 0, ""
	for _, name := range slices.Sorted(maps.Keys(traffic)) {
		if traffic[name] <= 0 {
			continue
		}
		cum += traffic[name]
		last = name
		if x < float64(cum) {
			return name
		}
	}
	// u rounded up to 1 (or beyond, from a bad draw): the last deployment with traffic.
	return last
}

// Mirrors is which deployments get a copy of one request: each mirrored deployment, in name
// order, by a draw of its own, so that mirrors are independent of each other and of Choose.
func Mirrors(mirror map[string]int, draw func() float64) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(mirror)) {
		if pct := mirror[name]; pct > 0 && draw()*100 < float64(pct) {
			out = append(out, name)
		}
	}
	return out
}
