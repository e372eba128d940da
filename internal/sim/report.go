package sim

import (
	"fmt"
	"strings"
	"time"
)

// Compare simulates cfg under each policy and appends the lower bound.
func Compare(cfg Config, policies ...Policy) []Result {
	var out []Result
	for _, p := range policies {
		out = append(out, Simulate(cfg, p))
	}
	return append(out, LowerBound(cfg))
}

// Markdown renders results as a Markdown table.
func Markdown(results []Result) string {
	var b strings.Builder
	b.WriteString("| policy | node-hours | utilisation | wait p50 | wait p95 | jobs completed | scale-ups (nodes created) | preemption requeues |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		completed := fmt.Sprintf("%d/%d", r.Completed, r.Jobs)
		if r.Failed > 0 {
			completed += fmt.Sprintf(" (%d failed)", r.Failed)
		}
		if r.LowerBound {
			fmt.Fprintf(&b, "| %s | %.1f | 100%% | — | — | %s | — | — |\n", r.Policy, r.NodeTime.Hours(), completed)
			continue
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f%% | %s | %s | %s | %d (%d) | %d |\n", r.Policy, r.NodeTime.Hours(),
			100*r.Utilisation(), r.WaitP50.Round(time.Second), r.WaitP95.Round(time.Second), completed,
			r.ScaleUps, r.NodesCreated, r.PreemptionRequeues)
	}
	return b.String()
}
