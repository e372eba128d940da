package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jmespath-community/go-jmespath"
)

// --query applies a JMESPath expression (jmespath.org, as az --query) to the JSON a command
// would print. The result is printed as JSON, or YAML with -o yaml, or as az prints tsv (tsv.go).
// With the table format a scalar, or a list of scalars, prints one value a line (for shell
// loops); an object, or a list of objects, is a table of their scalar fields, as az's (columns
// in the order of the query's {a: x, b: y}); anything else prints as JSON.

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

// writeQueryTable writes an object or a list of objects as a table of their scalar fields, and
// reports whether it could.
func writeQueryTable(w io.Writer, v any, orders [][]string) bool {
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	var objs []map[string]any
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		objs = append(objs, m)
	}
	cols := tableColumns(objs, orders)
	if len(cols) == 0 {
		return false
	}
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = strings.ToUpper(c[:1]) + c[1:]
	}
	rows := make([][]string, 0, len(objs))
	for _, m := range objs {
		row := make([]string, len(cols))
		for i, c := range cols {
			if x, ok := m[c]; ok && x != nil && isScalar(x) {
				row[i] = tsvCell(x)
			}
		}
		rows = append(rows, row)
	}
	return table(w, header, rows) == nil
}

// tableColumns are the keys with a scalar value in some object, in the query's order or sorted;
// az leaves out id, type and etag.
func tableColumns(objs []map[string]any, orders [][]string) []string {
	seen := map[string]bool{}
	var cols []string
	for _, m := range objs {
		for _, k := range objectKeys(m, orders) {
			if x := m[k]; !seen[k] && x != nil && isScalar(x) && k != "id" && k != "type" && k != "etag" {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	return cols
}
