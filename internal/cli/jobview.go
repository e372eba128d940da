package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newJobShowCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a job: status, command as it ran, inputs, params, tags, events, metrics, outputs",
		Example: `  hangar job show plucky_otter_k3x9q2mz
  hangar job show -n plucky_otter_k3x9q2mz -o json
  hangar job show plucky_otter_k3x9q2mz --query bound_command`,
	}
	name := addNameArg(cmd, "job", jobNames, env)
	cmd.RunE = env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
		d, err := c.Jobs.Get(cmd.Context(), name.name)
		if err != nil {
			return err
		}
		return env.printData(d, func(w io.Writer) error { return showJob(w, d) })
	})
	return cmd
}

func newJobCancelCmd(env *Env) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "cancel NAME",
		Short: "Cancel a job (its processes get SIGTERM, then SIGKILL; outputs and logs are kept)",
		Long: `Cancel a job. On a terminal it asks first; elsewhere (a script, CI) it refuses unless --yes is
given, and never waits for an answer.`,
		Example: "  hangar job cancel plucky_otter_k3x9q2mz\n  hangar job cancel -n plucky_otter_k3x9q2mz --yes",
	}
	name := addNameArg(cmd, "job", jobNames, env)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.RunE = env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
		if err := env.confirm(yes, fmt.Sprintf("Cancel job %s?", name.name), "cancel job "+name.name); err != nil {
			return err
		}
		d, err := c.Jobs.Cancel(cmd.Context(), name.name)
		if err != nil {
			return err
		}
		return env.printData(d, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "Job %s: %s\n", d.ID, d.Status)
			return err
		})
	})
	return cmd
}

func showJob(w io.Writer, d *api.RunDetail) error {
	status := string(d.Status)
	if d.StatusReason != "" {
		status += " (" + d.StatusReason + ")"
	}
	exit := ""
	if d.ExitCode != nil {
		exit = strconv.Itoa(*d.ExitCode)
	}
	pairs := [][2]string{
		{"Name", d.ID}, {"Display name", d.DisplayName}, {"Experiment", d.ExperimentName},
		{"Description", d.Description}, {"Status", status}, {"Compute", d.Compute},
		{"Submitted by", d.Spec.Properties["created_by"]},
		{"Created", fmtTime(&d.CreatedAt)}, {"Started", fmtTime(d.StartedAt)}, {"Ended", fmtTime(d.EndedAt)},
		{"Duration", timesOf(&d.Run, time.Now()).String()}, {"Exit code", exit}, {"Phases", fmtPhases(d.Phases)},
		{"Archived", archivedText(d.Archived)},
	}
	pairs = append(pairs, serverlessPairs(d)...)
	pairs = append(pairs, checkpointPairs(d)...)
	pairs = append(pairs, sweepPairs(d)...)
	pairs = append(pairs, pipelinePairs(d)...)
	pairs = append(pairs, commandPairs(d)...)
	if err := kv(w, pairs); err != nil {
		return err
	}
	section(w, "Inputs", fmtInputs(d.Spec.Inputs))
	section(w, "Object-store data", fmtRunData(d.Data)) // jobdata.go
	section(w, "Params", fmtStrings(d.Params, " = "))
	section(w, "Tags", fmtStrings(d.Tags, ": "))
	section(w, "Metrics (last value)", fmtMetrics(d.Metrics))
	if err := showTrials(w, d); err != nil {
		return err
	}
	if err := showSteps(w, d); err != nil {
		return err
	}
	section(w, "Warnings", d.Warnings)
	var evs []string
	for _, e := range d.Events {
		evs = append(evs, fmt.Sprintf("%s  %-15s %s", e.Time.Local().Format("15:04:05.000"), e.To, e.Reason))
	}
	section(w, "Events", evs)
	if d.HasArtifacts || len(d.Outputs) > 0 {
		var outs []string
		if d.HasArtifacts {
			outs = append(outs, "artifacts: outputs/, logs/, user_logs/std_log.txt")
		}
		sort.Strings(d.Outputs)
		for _, o := range d.Outputs {
			outs = append(outs, "named output: "+o)
		}
		outs = append(outs, "download: hangar job download "+d.ID+" --all")
		section(w, "Outputs", outs)
	}
	section(w, "Logged models", fmtLoggedModels(d.ID, d.LoggedModels))
	if d.Error != "" {
		section(w, "Error", []string{d.Error})
	}
	section(w, "Log tail", d.LogTail)
	return nil
}

func section(w io.Writer, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

func fmtPhases(p map[string]float64) string {
	var parts []string
	for _, name := range []string{"queued", "provisioning", "preparing", "image", "environment", "starting", "running", "finalizing"} {
		if v, ok := p[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", name, fmtDuration(time.Duration(v*float64(time.Second)))))
		}
	}
	return strings.Join(parts, ", ")
}

func fmtMetrics(m map[string]float64) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("%s = %g", n, m[n]))
	}
	return out
}

// fmtLoggedModels lists a run's MLflow 3 logged models: id, name, status, files, and where
// `job download` puts them.
func fmtLoggedModels(job string, ms []api.LoggedModel) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s  %s  %s  %d files (%s)", m.ID, m.Name, strings.TrimPrefix(m.Status, "LOGGED_MODEL_"),
			m.Count, humanBytes(m.Size)))
	}
	if len(out) > 0 {
		out = append(out, "download: hangar job download "+job+" (into artifacts/models/<model_id>/); register: models:/<model_id>")
	}
	return out
}
