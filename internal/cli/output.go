package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"go.yaml.in/yaml/v3"
)

// printData writes v as JSON or YAML (same field names and order), as az's tsv (tsv.go), nothing
// for -o none, or calls table for the table format.
// With --query, v is first replaced by the expression's result (query.go).
// Tables are escaped on a terminal (termsafe.go); JSON and YAML escape control characters themselves.
func (e *Env) printData(v any, table func(w io.Writer) error) error {
	if e.Output == "none" {
		return nil
	}
	if e.Query != "" {
		res, err := applyQuery(e.Query, v)
		if err != nil {
			return err
		}
		if e.Output == "table" {
			w, flush := e.tableOut()
			if writeQueryLines(w, res) || writeQueryTable(w, res, queryKeyOrders(e.Query)) {
				return flush()
			}
		}
		v = res
		if e.Output == "table" {
			table = nil
		}
	}
	switch e.Output {
	case "json":
		return writeJSON(e.Stdout, v)
	case "yaml":
		return writeYAML(e.Stdout, v)
	case "tsv":
		return e.printTSV(v)
	default:
		if table == nil {
			return writeJSON(e.Stdout, v)
		}
		w, flush := e.tableOut()
		if err := table(w); err != nil {
			return err
		}
		return flush()
	}
}

// outputFormat checks an --output value; az's jsonc and yamlc (colored) are json and yaml.
func outputFormat(s string) (string, error) {
	switch f := strings.ToLower(s); f {
	case "table", "json", "yaml", "tsv", "none":
		return f, nil
	case "jsonc", "yamlc":
		return strings.TrimSuffix(f, "c"), nil
	}
	return "", usageError("--output must be table, json, yaml, tsv or none, not %q", s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeYAML converts through JSON so that YAML keys are the JSON names, in the same order.
func writeYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return err
	}
	blockStyle(&n)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return err
	}
	return enc.Close()
}

func blockStyle(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 && !needsQuotes(n.Value) {
		n.Style &^= yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// needsQuotes keeps quotes on strings that would read back as another type.
func needsQuotes(s string) bool {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return true
	}
	str, ok := v.(string)
	return !ok || str != s || strings.ContainsAny(s, "\n:#") || s == ""
}

// table writes aligned columns.
func table(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// kv writes "Key: value" lines aligned.
func kv(w io.Writer, pairs [][2]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	for _, p := range pairs {
		if p[1] == "" {
			continue
		}
		fmt.Fprintf(tw, "%s:\t%s\n", p[0], p[1])
	}
	return tw.Flush()
}

func fmtTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute-50*time.Millisecond: // would round to "60.0s"
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

// humanBytes renders a size like "12.3 MB".
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	// Move up a unit while the value would print as 1000.0 or more after rounding.
	for float64(n)/float64(div) >= unit-0.05 && exp < 5 {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
