package component

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// Given is what a step gives a component's inputs: values (literals, data), inputs read from
// another step's output (From), and inputs taken from the enclosing pipeline component's own
// inputs (Params, name of the enclosing input), which are bound when that component is used.
type Given struct {
	Values map[string]job.Input
	From   map[string]job.StepRef
	Params map[string]string
}

func (g Given) has(name string) bool {
	_, v := g.Values[name]
	_, f := g.From[name]
	_, p := g.Params[name]
	return v || f || p
}

// Bind checks what a step gives against a component's declared inputs and returns the
// inputs the step runs with: each given value (checked against the declared type, min, max
// and enum), else the default, else nothing for an optional input. An input read from a step
// output or a parameter is the declared input without a value (its path comes later). The
// errors name the input.
func Bind(decl map[string]Input, g Given) (map[string]job.Input, []error) {
	var errs []error
	out := map[string]job.Input{}
	for _, name := range sortedKeys(g.Values) {
		if _, ok := decl[name]; !ok {
			errs = append(errs, fmt.Errorf("inputs.%s: the component has no input %s (its inputs: %s)", name, name, list(decl)))
		}
	}
	for _, m := range []map[string]job.StepRef{g.From} {
		for _, name := range sortedKeys(m) {
			if _, ok := decl[name]; !ok {
				errs = append(errs, fmt.Errorf("inputs.%s: the component has no input %s (its inputs: %s)", name, name, list(decl)))
			}
		}
	}
	for _, name := range sortedKeys(g.Params) {
		if _, ok := decl[name]; !ok {
			errs = append(errs, fmt.Errorf("inputs.%s: the component has no input %s (its inputs: %s)", name, name, list(decl)))
		}
	}
	for _, name := range sortedKeys(decl) {
		d := decl[name]
		v, given := g.Values[name]
		switch {
		case given:
			in, err := Check(d, v)
			if err != nil {
				errs = append(errs, fmt.Errorf("inputs.%s: %w", name, err))
				continue
			}
			out[name] = in
		case g.has(name):
			in := withMode(d.Input)
			in.Value, in.Path = "", ""
			out[name] = in
		case d.HasDefault:
			out[name] = withMode(d.Input)
		case d.Optional: // declared without a value: $[[ ]] segments that use it are dropped
			out[name] = withMode(d.Input)
		default:
			errs = append(errs, fmt.Errorf("inputs.%s: required by the component (declared %s, no default)", name, d.Type))
		}
	}
	return out, errs
}

// Check checks one given value against its declaration and returns the input the step gets.
func Check(d Input, v job.Input) (job.Input, error) {
	declLiteral, givenLiteral := isLiteral(d.Type), v.IsLiteral()
	switch {
	case declLiteral && !givenLiteral:
		return v, fmt.Errorf("expected a %s value, got %s data", d.Type, v.Type)
	case !declLiteral && givenLiteral:
		return v, fmt.Errorf("expected %s data (an input object with a path), got the %s %s", d.Type, v.Type, quoteValue(v.Value))
	case !declLiteral:
		if v.Mode == "" { // the step gave none of its own: the declared one, else ro_mount
			v.Mode = d.Mode
		}
		v.Optional = d.Optional
		return withMode(v), nil
	}
	out := d.Input
	out.Value = v.Value
	if err := checkLiteral(d, v.Value); err != nil {
		return v, err
	}
	return out, nil
}

func checkLiteral(d Input, value string) error {
	var x float64
	switch d.Type {
	case job.InputInteger:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || f != math.Trunc(f) {
			return fmt.Errorf("expected an integer, got %s", quoteValue(value))
		}
		x = f
	case job.InputNumber:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return fmt.Errorf("expected a number, got %s", quoteValue(value))
		}
		x = f
	case job.InputBoolean:
		if _, ok := ParseBool(value); !ok {
			return fmt.Errorf("expected true or false, got %s", quoteValue(value))
		}
	}
	if d.Min != nil && x < *d.Min {
		return fmt.Errorf("%s is below min %s", value, fmtNum(*d.Min))
	}
	if d.Max != nil && x > *d.Max {
		return fmt.Errorf("%s is above max %s", value, fmtNum(*d.Max))
	}
	if len(d.Enum) > 0 && !slices.ContainsFunc(d.Enum, func(e string) bool { return sameValue(d.Type, e, value) }) {
		return fmt.Errorf("%s is not one of the enum values (%s)", quoteValue(value), strings.Join(d.Enum, ", "))
	}
	return nil
}

// withMode gives a data input without a mode the default one, ro_mount.
func withMode(in job.Input) job.Input {
	if in.Mode == "" && !in.IsLiteral() {
		in.Mode = "ro_mount"
	}
	return in
}

// ParseBool reads the boolean forms YAML 1.1 and Azure's files use.
func ParseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	}
	return false, false
}

func sameValue(typ, a, b string) bool {
	if a == b {
		return true
	}
	if typ == job.InputInteger || typ == job.InputNumber {
		x, e1 := strconv.ParseFloat(a, 64)
		y, e2 := strconv.ParseFloat(b, 64)
		return e1 == nil && e2 == nil && x == y
	}
	return false
}

func isLiteral(t string) bool {
	switch t {
	case job.InputString, job.InputInteger, job.InputNumber, job.InputBoolean:
		return true
	}
	return false
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func quoteValue(s string) string { return strconv.Quote(s) }

func list(decl map[string]Input) string {
	if len(decl) == 0 {
		return "none declared"
	}
	return strings.Join(sortedKeys(decl), ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
