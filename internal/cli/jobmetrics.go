package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/guptarohit/asciigraph"
	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

func newJobMetricsCmd(env *Env) *cobra.Command {
	var metric string
	cmd := &cobra.Command{
		Use:   "metrics JOB",
		Short: "Print a job's metric history (step, time, value); on a terminal, a chart of each metric",
		Long: `Print every logged value of a job's metrics, in logging order. When stdout is a terminal a
small chart of each metric follows the table. Here --name (-n) names a metric, not the job:
the job is the argument.`,
		Example: `  hangar job metrics plucky_otter_k3x9q2mz
  hangar job metrics plucky_otter_k3x9q2mz --name loss
  hangar job metrics plucky_otter_k3x9q2mz -o json --query "[?name=='loss'].value"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("job metrics takes one job name, not %d (the metric is --name)", len(args))
			}
			return nil
		},
		ValidArgsFunction: env.completer(jobNames),
	}
	cmd.Flags().StringVarP(&metric, "name", "n", "", "only this metric")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		name := nameArg{name: args[0]}
		c, err := env.client(cmd.Context())
		if err != nil {
			return err
		}
		resp, err := c.Jobs.Metrics(cmd.Context(), name.name)
		if err != nil {
			return err
		}
		ms := filterMetrics(resp.Metrics, metric)
		if metric != "" && len(ms) == 0 {
			return fmt.Errorf("job %s has no metric %q (it has: %v)", name.name, metric, metricNames(resp.Metrics))
		}
		return env.printData(ms, func(w io.Writer) error {
			rows := make([][]string, 0, len(ms))
			for _, m := range ms {
				rows = append(rows, []string{m.Name, strconv.FormatInt(m.Step, 10), m.Time.Local().Format("2006-01-02 15:04:05.000"), strconv.FormatFloat(m.Value, 'g', -1, 64)})
			}
			if err := table(w, []string{"METRIC", "STEP", "TIME", "VALUE"}, rows); err != nil {
				return err
			}
			if isTerminal(env.Stdout) {
				writeCharts(w, ms)
			}
			return nil
		})
	}
	return cmd
}

func filterMetrics(ms []job.Metric, name string) []job.Metric {
	out := []job.Metric{}
	for _, m := range ms {
		if name == "" || m.Name == name {
			out = append(out, m)
		}
	}
	return out
}

func metricNames(ms []job.Metric) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// writeCharts draws each metric's values in logging order, one small chart a metric.
func writeCharts(w io.Writer, ms []job.Metric) {
	series := map[string][]float64{}
	for _, m := range ms {
		series[m.Name] = append(series[m.Name], m.Value)
	}
	for _, n := range metricNames(ms) {
		if len(series[n]) < 2 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", asciigraph.Plot(series[n], asciigraph.Height(8), asciigraph.Width(60), asciigraph.Caption(n)))
	}
}

// comparison is one job of job compare.
type comparison struct {
	Name    string             `json:"name"`
	Status  job.State          `json:"status"`
	Inputs  map[string]string  `json:"inputs"`
	Params  map[string]string  `json:"params"`
	Metrics map[string]float64 `json:"metrics"`
}

func newJobCompareCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compare NAME NAME...",
		Short: "Compare jobs side by side: inputs, params and final metric values",
		Example: `  hangar job compare plucky_otter_k3x9q2mz brave_lynx_p2m8d7qa
  hangar job compare run-a run-b run-c -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError("job compare needs at least two job names, got %d", len(args))
			}
			return nil
		},
		ValidArgsFunction: env.completerAny(jobNames),
	}
	cmd.RunE = env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
		cs, err := compareJobs(cmd.Context(), c, args)
		if err != nil {
			return err
		}
		return env.printData(cs, func(w io.Writer) error { return compareTable(w, cs) })
	})
	return cmd
}

func compareJobs(ctx context.Context, c *api.Client, names []string) ([]comparison, error) {
	out := make([]comparison, 0, len(names))
	for _, n := range names {
		d, err := c.Jobs.Get(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", n, err)
		}
		cmp := comparison{Name: d.ID, Status: d.Status, Inputs: map[string]string{}, Params: d.Params, Metrics: d.Metrics}
		for k, in := range d.Spec.Inputs {
			cmp.Inputs[k] = inputValue(in)
		}
		if cmp.Params == nil {
			cmp.Params = map[string]string{}
		}
		if cmp.Metrics == nil {
			cmp.Metrics = map[string]float64{}
		}
		out = append(out, cmp)
	}
	return out, nil
}

func inputValue(in job.Input) string {
	if in.IsLiteral() {
		return in.Value
	}
	return in.Path
}

// compareTable writes one row per input, param and metric, one column per job; a value that
// differs between the jobs is marked with * in the first column.
func compareTable(w io.Writer, cs []comparison) error {
	header := []string{""}
	status := []string{"status"}
	for _, c := range cs {
		header = append(header, c.Name)
		status = append(status, string(c.Status))
	}
	rows := [][]string{status}
	add := func(prefix string, get func(c comparison) map[string]string) {
		keys := map[string]bool{}
		for _, c := range cs {
			for k := range get(c) {
				keys[k] = true
			}
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			row := []string{prefix + k}
			for _, c := range cs {
				v, ok := get(c)[k]
				if !ok {
					v = "-"
				}
				row = append(row, v)
			}
			rows = append(rows, row)
		}
	}
	add("input ", func(c comparison) map[string]string { return c.Inputs })
	add("param ", func(c comparison) map[string]string { return c.Params })
	add("metric ", func(c comparison) map[string]string {
		m := map[string]string{}
		for k, v := range c.Metrics {
			m[k] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		return m
	})
	return table(w, header, rows)
}
