package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/jmespath-community/go-jmespath"
)

// --query applies a JMESPath expression (jmespath.org, as az --query) to the JSON a command
// would print. The result is printed as JSON, or YAML with -o yaml, or as az prints tsv (tsv.go); with the table format a
// scalar, or a list of scalars, prints one value a line (for shell loops), anything else as JSON.

// checkQuery refuses an expression that does not parse, before the command does anything.
func checkQuery(expr string) error {
	if expr == "" {
		return nil
	}
	if _, err := jmespath.Compile(expr); err != nil {
		return usageError("--query %q: %v", expr, err)
	}
	return nil
}

// applyQuery runs expr over v's JSON form.
func applyQuery(expr string, v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var data any
	if err := json.Unmarshal(b, &data); err != nil {
		return nil, err
	}
	q, err := jmespath.Compile(expr)
	if err != nil {
		return nil, usageError("--query %q: %v", expr, err)
	}
	out, err := q.Search(data)
	if err != nil {
		return nil, fmt.Errorf("--query %q: %w", expr, err)
	}
	return out, nil
}

// writeQueryLines writes a scalar or a list of scalars one value a line, and reports whether
// it could.
func writeQueryLines(w io.Writer, v any) bool {
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	lines := make([]string, 0, len(list))
	for _, x := range list {
		switch x := x.(type) {
		case string:
			lines = append(lines, x)
		case float64:
			lines = append(lines, strconv.FormatFloat(x, 'g', -1, 64))
		case bool:
			lines = append(lines, strconv.FormatBool(x))
		case nil:
			lines = append(lines, "")
		default:
			return false
		}
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return true
}
