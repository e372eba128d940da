package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Markdown writes rows as a Markdown table.
func Markdown(w io.Writer, title string, rows []Row) {
	tableHead(w, title, "case", "median", "samples", "bytes sent", "ratio to baseline")
	for _, r := range rows {
		bytes := "–"
		if r.Bytes >= 0 {
			bytes = fmt.Sprintf("%d", r.Bytes)
		}
		ratio := "baseline"
		if r.Baseline != "" {
			ratio = fmt.Sprintf("%.2f×", r.Ratio)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Name, ms(r.Median), samples(r.Samples, ms), bytes, ratio)
	}
}

// tableHead writes a section's title and the head of its Markdown table.
func tableHead(w io.Writer, title string, columns ...string) {
	fmt.Fprintf(w, "\n### %s\n\n", title)
	fmt.Fprintln(w, "| "+strings.Join(columns, " | ")+" |")
	fmt.Fprintln(w, strings.Repeat("|---", len(columns))+"|")
}

// samples writes a case's samples for a table cell, each as format writes it.
func samples[T any](ss []T, format func(T) string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = format(s)
	}
	return strings.Join(out, " ")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
