package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// -o tsv prints what a command would print as JSON the way az does (knack's format_tsv), so
// that `X=$(hangar ... --query name -o tsv)` reads the same as with az:
//   - a value that is not a list is one row; a list is one row per item;
//   - a scalar row is the value bare (true/false for a boolean, nothing at all for null at the top);
//   - an object row is its values joined by tabs: in the order of the --query's {a: x, b: y}
//     when it is one, else sorted by key; a list row is its items joined by tabs;
//   - inside a row, a list is its length, an object is empty, null is None (as az prints it).

// tsvData is v in JSON's generic form, numbers kept as written.
func tsvData(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// writeTSV writes v (JSON's generic form) as rows; orders are the key orders of the query's
// multi-select hashes (queryKeyOrders).
func writeTSV(w io.Writer, v any, orders [][]string) error {
	if v == nil {
		return nil
	}
	rows, ok := v.([]any)
	if !ok {
		rows = []any{v}
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(tsvRow(r, orders))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tsvRow is one item's line, without its newline.
func tsvRow(v any, orders [][]string) string {
	switch v := v.(type) {
	case map[string]any:
		keys := objectKeys(v, orders)
		cells := make([]string, len(keys))
		for i, k := range keys {
			cells[i] = tsvCell(v[k])
		}
		return strings.Join(cells, "\t")
	case []any:
		cells := make([]string, len(v))
		for i, x := range v {
			cells[i] = tsvCell(x)
		}
		return strings.Join(cells, "\t")
	case bool:
		return strconv.FormatBool(v)
	}
	return tsvCell(v)
}

// tsvCell is one value inside a row.
func tsvCell(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case string:
		return v
	case bool:
		if v {
			return "True"
		}
		return "False"
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		return strconv.Itoa(len(v))
	case map[string]any:
		return ""
	}
	return fmt.Sprint(v)
}

// objectKeys is the order of an object's columns: that of the query's multi-select hash with
// exactly these keys, else sorted.
func objectKeys(m map[string]any, orders [][]string) []string {
	for _, o := range orders {
		if len(o) != len(m) {
			continue
		}
		all := true
		for _, k := range o {
			if _, ok := m[k]; !ok {
				all = false
				break
			}
		}
		if all {
			return o
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// queryKeyOrders lists the keys of each multi-select hash ({a: x, b: y}) in expr, in the
// order written: the columns az prints for the objects they make.
func queryKeyOrders(expr string) [][]string {
	if expr == "" {
		return nil
	}
	ast, err := parsing.NewParser().Parse(expr)
	if err != nil {
		return nil
	}
	var out [][]string
	var walk func(n parsing.ASTNode)
	walk = func(n parsing.ASTNode) {
		if n.NodeType == parsing.ASTMultiSelectHash {
			var keys []string
			for _, c := range n.Children {
				if k, ok := c.Value.(string); ok {
					keys = append(keys, k)
				}
			}
			out = append(out, keys)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(ast)
	return out
}

// printTSV writes v as -o tsv does, escaped on a terminal as tables are.
func (e *Env) printTSV(v any) error {
	data, err := tsvData(v)
	if err != nil {
		return err
	}
	w, flush := e.tableOut()
	if err := writeTSV(w, data, queryKeyOrders(e.Query)); err != nil {
		return err
	}
	return flush()
}
