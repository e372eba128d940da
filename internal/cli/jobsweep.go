package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/hangar-ml/hangar/internal/api"
)

// sweepPairs are job show's lines about a sweep (its objective, progress and best trial) or a
// trial (its sweep, and why the sweep stopped it).
func sweepPairs(d *api.RunDetail) [][2]string {
	if t := d.TrialOf; t != nil {
		pairs := [][2]string{{"Sweep", fmt.Sprintf("%s (trial %d)", t.Sweep, t.Index)}}
		if t.Stopped != "" {
			pairs = append(pairs, [2]string{"Stopped by sweep", t.Stopped})
		}
		return pairs
	}
	s := d.Sweep
	if s == nil {
		return nil
	}
	objective := s.Goal + " " + s.Metric
	policy := s.EarlyTermination
	if policy == "" {
		policy = "none"
	}
	pairs := [][2]string{{"Objective", objective}, {"Sampling", s.Sampling}, {"Early termination", policy},
		{"Trials created", fmt.Sprintf("%d of at most %d (%d at a time)", len(s.Trials), s.MaxTotalTrials, s.MaxConcurrentTrials)}}
	if s.BestChildRunID != "" {
		best := s.BestChildRunID
		if s.BestMetric != nil {
			best += fmt.Sprintf("  %s = %g", s.Metric, *s.BestMetric)
		}
		pairs = append(pairs, [2]string{"Best trial", best}, [2]string{"Best params", paramsText(s.BestParams)})
	}
	if s.DoneReason != "" {
		pairs = append(pairs, [2]string{"Sweep done", s.DoneReason})
	}
	return pairs
}

// showTrials prints a sweep's trials as a table: index, run, status, parameters, primary metric
// and why the sweep stopped it.
func showTrials(w io.Writer, d *api.RunDetail) error {
	s := d.Sweep
	if s == nil || len(s.Trials) == 0 {
		return nil
	}
	fmt.Fprintln(w, "Trials:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  #\tNAME\tSTATUS\tPARAMS\t%s\tSTOPPED\n", strings.ToUpper(s.Metric))
	for _, t := range s.Trials {
		metric := "-"
		if t.Metric != nil {
			metric = fmt.Sprintf("%g", *t.Metric)
		}
		mark := ""
		if t.RunID == s.BestChildRunID {
			mark = " *"
		}
		fmt.Fprintf(tw, "  %d\t%s%s\t%s\t%s\t%s\t%s\n", t.Index, t.RunID, mark, t.Status, paramsText(t.Params), metric, oneLine(t.Stopped))
	}
	return tw.Flush()
}

// paramsText renders a trial's parameters as name=value, sorted by name.
func paramsText(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+strings.Trim(string(v), `"`))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
