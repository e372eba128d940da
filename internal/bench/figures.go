package bench

import (
	"fmt"
	"io"
	"sort"
)

// Figure is one line of a table of rates, shares or latencies (what Row, which holds durations
// of repeated cases, does not fit).
type Figure struct {
	Name    string
	Value   float64
	Unit    string // "jobs/s", "% of a core", "ms", "fsyncs/job"
	Samples []float64
	// Baseline names the figure this one is compared with ("" for a baseline or a plain figure).
	Baseline string
	Ratio    float64
}

// FigureMarkdown writes figures as a Markdown table.
func FigureMarkdown(w io.Writer, title string, figs []Figure) {
	tableHead(w, title, "case", "value", "samples", "ratio to baseline")
	for _, f := range figs {
		ratio := "–"
		if f.Baseline != "" {
			ratio = fmt.Sprintf("%.2f×", f.Ratio)
		}
		fmt.Fprintf(w, "| %s | %s %s | %s | %s |\n", f.Name, num(f.Value), f.Unit, samples(f.Samples, num), ratio)
	}
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// medianOf is the median of vs (0 when empty).
func medianOf(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	switch {
	case len(s) == 0:
		return 0
	case len(s)%2 == 1:
		return s[len(s)/2]
	default:
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
}

// quantile is the q-quantile of vs by the nearest-rank method (0 when empty).
func quantile(vs []float64, q float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// against is a figure compared with a baseline figure.
func against(base Figure, name string, v float64, unit string, samples []float64) Figure {
	f := Figure{Name: name, Value: v, Unit: unit, Samples: samples, Baseline: base.Name}
	if base.Value != 0 {
		f.Ratio = v / base.Value
	}
	return f
}
