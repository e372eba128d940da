package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

type listFlags struct {
	q        api.JobListQuery
	since    string
	archived bool
	all      bool
	mine     bool
	parent   string // --parent-job-name: a pipeline's steps or a sweep's trials (jobchildren.go)
}

func newJobListCmd(env *Env) *cobra.Command {
	var f listFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs, newest first, with filters and pages",
		Long: `List jobs, newest first. Filters combine (all must match); --status and --tag may be repeated
(any of the statuses, every tag). Archived jobs are left out unless --archived or --all.

A page holds --limit jobs; when more follow, the last line on stderr gives the --page-token
that lists the next page (with the same filters and order).

-o json includes each job's last metric values. --query applies a JMESPath expression to that
JSON, as az --query does.`,
		Example: `  hangar job list
  hangar job list --status Failed --since 2h
  hangar job list --experiment mnist --tag best --order -created --limit 20
  hangar job list --compute gpu-box --search resnet -o json
  hangar job list --mine --status Running
  hangar job list --query "[?metrics.loss < ` + "`0.1`" + `].name"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return env.listJobs(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.q.Statuses, "status", nil, "only jobs in this status (repeatable: any of them)")
	fl.StringVar(&f.q.Experiment, "experiment", "", "only this experiment's jobs")
	fl.StringVar(&f.q.Compute, "compute", "", "only jobs on this compute target")
	fl.StringArrayVar(&f.q.Tags, "tag", nil, "only jobs with this tag: key or key=value (repeatable: all of them)")
	fl.StringVar(&f.since, "since", "", "only jobs created since: a duration (30m, 2h, 3d) or a time (2026-01-31, 2026-01-31T10:00:00Z)")
	fl.StringVar(&f.q.Query, "search", "", "only jobs whose name or display name contains this text (any case)")
	fl.StringVar(&f.q.User, "user", "", "only jobs submitted by this user (a name of hangar user list)")
	fl.BoolVar(&f.mine, "mine", false, "only jobs you submitted (the user your credentials stand for)")
	fl.IntVarP(&f.q.Limit, "limit", "r", 50, "jobs per page (at most 1000)")
	fl.IntVar(&f.q.Limit, "max-results", 50, "same as --limit")
	_ = fl.MarkHidden("max-results")
	fl.StringVar(&f.q.PageToken, "page-token", "", "continue a list where its previous page ended")
	fl.StringVar(&f.q.Order, "order", "-created", "sort by created, name or status; a leading - reverses")
	fl.BoolVar(&f.archived, "archived", false, "list archived jobs only")
	fl.BoolVar(&f.all, "all", false, "list archived jobs too")
	fl.StringVar(&f.parent, "parent-job-name", "", "only the steps of this pipeline job, or the trials of this sweep (as az)")
	_ = cmd.RegisterFlagCompletionFunc("compute", env.completer(computeNames))
	_ = cmd.RegisterFlagCompletionFunc("status", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"NotStarted", "Queued", "Preparing", "Starting", "Running", "Finalizing", "CancelRequested", "Completed", "Failed", "Canceled"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func (e *Env) listJobs(cmd *cobra.Command, f listFlags) error {
	q := f.q
	if q.Limit < 1 {
		return usageError("--limit must be at least 1, not %d", q.Limit)
	}
	if f.since != "" {
		t, err := parseSince(f.since, time.Now())
		if err != nil {
			return usageError("--since: %v", err)
		}
		q.Since = t
	}
	switch {
	case f.mine && q.User != "":
		return usageError("--mine and --user: give one")
	case f.archived && f.all:
		return usageError("--archived and --all: give one")
	case f.archived:
		q.Archived = "only"
	case f.all:
		q.Archived = "all"
	}
	c, err := e.client(cmd.Context())
	if err != nil {
		return err
	}
	if f.mine {
		me, err := c.Users.WhoAmI(cmd.Context())
		if err != nil {
			return err
		}
		q.User = me.User // the server records the user a job's request authenticated as
	}
	var page *api.JobPage
	if f.parent != "" {
		page, err = childJobs(cmd.Context(), c, q, f.parent)
	} else {
		page, err = c.Jobs.ListPage(cmd.Context(), q)
	}
	if err != nil {
		return err
	}
	runs := page.Runs
	err = e.printData(runs, func(w io.Writer) error {
		rows := make([][]string, 0, len(runs))
		for _, r := range runs {
			status := string(r.Status)
			if r.Archived {
				status += " (archived)"
			}
			name := r.ID
			if r.TrialOf != nil || r.PipelineOf != nil { // a sweep's trial or a pipeline's step: marked, its parent in its name
				name = "└ " + name
			}
			rows = append(rows, []string{name, r.DisplayName, status, r.Compute,
				fmtTime(&r.CreatedAt), runDuration(&r.Run), r.StatusReason})
		}
		return table(w, []string{"NAME", "DISPLAY NAME", "STATUS", "COMPUTE", "CREATED", "DURATION", "REASON"}, rows)
	})
	if err == nil && page.Next != "" {
		fmt.Fprintf(e.Stderr, "More jobs: add --page-token %s\n", page.Next)
	}
	return err
}

// parseSince reads --since: a duration before now (30m, 2h, 3d, 1w) or a date or time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if n, unit, ok := dayDuration(s); ok {
		return now.Add(-time.Duration(n) * unit), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q is negative: give how long ago, like 2h", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (30m, 2h, 3d) nor a date (2026-01-31, 2026-01-31T10:00:00Z)", s)
}

// dayDuration reads "3d" and "2w", which time.ParseDuration does not.
func dayDuration(s string) (int, time.Duration, bool) {
	units := map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour}
	for suffix, unit := range units {
		if num, ok := strings.CutSuffix(s, suffix); ok {
			if n, err := strconv.Atoi(num); err == nil && n >= 0 {
				return n, unit, true
			}
		}
	}
	return 0, 0, false
}
