package sweep

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// number reads a parameter or choice value as a float64. Values come back from JSON as
// float64 after a restart even when they were drawn as int64, so every comparison of values
// goes through here (or key) to treat 3 and 3.0 as the same value.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// valueKey is a value's canonical text: numbers by their shortest float form, strings quoted,
// anything else by %v.
func valueKey(v any) string {
	if f, ok := number(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%v", v)
}

// key is a parameter set's canonical text, the identity used to never run a set twice.
func key(p Params) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(p)) {
		b.WriteString(strconv.Quote(name))
		b.WriteByte('=')
		b.WriteString(valueKey(p[name]))
		b.WriteByte(';')
	}
	return b.String()
}

// names are the space's parameter names in the fixed order every sampler walks them.
func (s Space) names() []string { return slices.Sorted(maps.Keys(s)) }

// goal turns a metric value into a score where higher is always better, so that the policies
// and Best are written once: maximize keeps the value, minimize negates it, and a NaN is the
// worst score there is.
type goal bool // true: minimize

func goalOf(o Objective) goal { return goal(strings.EqualFold(o.Goal, "minimize")) }

func (g goal) score(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(-1)
	}
	if g {
		return -v
	}
	return v
}

// better says whether value a beats value b.
func (g goal) better(a, b float64) bool { return g.score(a) > g.score(b) }

// best is the better of the values (NaN only when all are).
func (g goal) best(vs []float64) float64 {
	b := math.NaN()
	for i, v := range vs {
		if i == 0 || g.better(v, b) {
			b = v
		}
	}
	return b
}

// fmtv formats a metric value for a reason shown to the user.
func fmtv(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
