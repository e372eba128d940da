package resources

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// maxQuantityLen bounds the text a quantity may have, so that parsing stays cheap.
const maxQuantityLen = 64

// memoryUnits are the Kubernetes-style memory suffixes: binary (Ki…Ei) and decimal (k…E).
var memoryUnits = map[string]int64{
	"":   1,
	"Ki": Ki, "Mi": Mi, "Gi": Gi, "Ti": Ti, "Pi": Pi, "Ei": Ei,
	"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
}

// cpuUnits are the CPU suffixes, in millicores: plain cores and "m" for millicores.
var cpuUnits = map[string]int64{"": Core, "m": 1}

// ParseCPU parses a CPU quantity into millicores: "2" (cores), "0.5" or "500m".
// Amounts finer than one millicore are rounded up.
func ParseCPU(s string) (int64, error) {
	v, err := parseQuantity(s, cpuUnits, `"" (cores) or "m" (millicores)`)
	if err != nil {
		return 0, fmt.Errorf("parse cpu %q: %w", s, err)
	}
	return v, nil
}

// ParseMemory parses a memory quantity into bytes: "16Gi", "512Mi", "4G", "1.5Gi" or "1024".
// Binary suffixes are powers of 1024, decimal ones powers of 1000; fractions of a byte
// are rounded up.
func ParseMemory(s string) (int64, error) {
	v, err := parseQuantity(s, memoryUnits, "Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or none (bytes)")
	if err != nil {
		return 0, fmt.Errorf("parse memory %q: %w", s, err)
	}
	return v, nil
}

// parseQuantity parses "<decimal><unit>" with unit looked up in units (unitHelp names them
// for errors), rounding up to an integer and refusing results beyond int64.
func parseQuantity(s string, units map[string]int64, unitHelp string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty quantity")
	}
	if len(s) > maxQuantityLen {
		return 0, fmt.Errorf("longer than %d characters", maxQuantityLen)
	}
	end := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(s)
	}
	num, unit := s[:end], s[end:]
	mult, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (want %s)", unit, unitHelp)
	}
	intPart, frac, hasDot := strings.Cut(num, ".")
	if intPart == "" && frac == "" || hasDot && strings.Contains(frac, ".") {
		return 0, fmt.Errorf("want a non-negative number before the unit, got %q", num)
	}
	n, ok := new(big.Int).SetString(intPart+frac+"0", 10) // "0" keeps "" and "." parseable
	if !ok {
		return 0, fmt.Errorf("want a non-negative number, got %q", num)
	}
	// value = ceil(n * mult / 10^(len(frac)+1)), the extra 1 undoing the appended "0".
	n.Mul(n, big.NewInt(mult))
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac)+1)), nil)
	q, r := new(big.Int).QuoRem(n, den, new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("larger than %d", int64(math.MaxInt64))
	}
	return q.Int64(), nil
}

// FormatCPU renders millicores so that ParseCPU reads them back exactly: "2", "1.5", "500m".
func FormatCPU(milli int64) string {
	switch {
	case milli < 0:
		return "-" + FormatCPU(-milli)
	case milli%Core == 0:
		return strconv.FormatInt(milli/Core, 10)
	case milli < Core:
		return strconv.FormatInt(milli, 10) + "m"
	}
	frac := strings.TrimRight(fmt.Sprintf("%03d", milli%Core), "0")
	return strconv.FormatInt(milli/Core, 10) + "." + frac
}

// FormatMemory renders bytes with the largest binary unit that divides them exactly, so
// that ParseMemory reads them back: "16Gi", "512Mi", "1000".
func FormatMemory(b int64) string {
	if b == 0 {
		return "0"
	}
	for _, u := range []struct {
		name string
		size int64
	}{{"Ei", Ei}, {"Pi", Pi}, {"Ti", Ti}, {"Gi", Gi}, {"Mi", Mi}, {"Ki", Ki}} {
		if b%u.size == 0 {
			return strconv.FormatInt(b/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(b, 10)
}
