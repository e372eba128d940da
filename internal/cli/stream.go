package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

func newJobStreamCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "stream NAME",
		Aliases: []string{"logs"},
		Short:   "Follow a job's log until it ends",
		Long: `Print the job's log (stdout and stderr of its command) as it is written, until the job ends.
Exits 0 only when the job Completed: 3 when it Failed, 4 when it was Canceled.

A pipeline job has no log of its own: its stream is each step's change as it happens (queued,
running, completed, failed, skipped, with the step's run), and the last lines of the log of a
step that failed; the exit code is the pipeline's.

On a terminal, control characters in the log (escape sequences that move the cursor, set the
title or write the clipboard) are shown escaped, as \x1b[31m; --raw prints them as they are.
Piped or redirected, the log is written byte for byte.`,
		Example: "  hangar job stream plucky_otter_k3x9q2mz\n  hangar job stream my_pipeline_job   # its steps as they change\n  hangar job logs -n plucky_otter_k3x9q2mz\n  hangar job logs plucky_otter_k3x9q2mz --raw   # keep the job's colours",
	}
	name := addNameArg(cmd, "job", jobNames, env)
	var raw bool
	addRawFlag(cmd, &raw)
	cmd.RunE = env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
		return env.stream(cmd.Context(), c, name.name, raw)
	})
	return cmd
}

// stream prints log lines until the run ends, then a summary; the error carries the exit code.
// A pipeline's stream is its steps' changes instead (streamPipeline).
// A multi-node run's nodes each have a log (std_log.txt for node 0, std_log_node_<n>.txt for the
// others): they are followed together, their lines (already prefixed with their rank) interleaved.
// On a terminal the lines are escaped unless raw (termsafe.go).
func (e *Env) stream(ctx context.Context, c *api.Client, name string, raw bool) error {
	files := []string{""}
	if d, err := c.Jobs.Get(ctx, name); err == nil {
		if d.Spec.Pipeline != nil {
			return e.streamPipeline(ctx, c, name, raw) // pipelinestream.go: its steps, not a log
		}
		for n := 1; n < d.Spec.Resources.InstanceCount; n++ {
			files = append(files, fmt.Sprintf("std_log_node_%d.txt", n))
		}
	}
	var mu sync.Mutex
	errs := make(chan error, len(files))
	out := newRunOutput(e.Stdout, raw)
	for _, f := range files {
		go func() { errs <- e.follow(ctx, c, name, f, out, &mu) }()
	}
	var firstErr error
	for range files {
		if err := <-errs; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	d, err := c.Jobs.Get(ctx, name)
	if err != nil {
		return err
	}
	return e.summary(d, newRunOutput(e.Stderr, raw))
}

// follow prints one log file's lines until the run ended and they were all read. When the server
// goes away it keeps trying for a while (for the local workspace, restarting it).
func (e *Env) follow(ctx context.Context, c *api.Client, name, file string, out runOutput, mu *sync.Mutex) error {
	var after int64
	var lostSince time.Time
	for {
		resp, err := c.Jobs.Logs(ctx, name, file, after, 20*time.Second)
		if err != nil {
			if err := e.reconnect(ctx, &c, &lostSince, err, time.Second); err != nil {
				return err
			}
			continue
		}
		lostSince = time.Time{}
		mu.Lock()
		for _, l := range resp.Lines {
			out.line(l.Text)
		}
		mu.Unlock()
		after = resp.Next
		if resp.Done {
			return nil
		}
	}
}

// summary prints how a run ended and returns the matching exit code; the reason and warnings,
// which may quote the run's output, are written through out.
func (e *Env) summary(d *api.RunDetail, out runOutput) error {
	dur := timesOf(&d.Run, time.Now()).String()
	exit := ""
	if d.ExitCode != nil {
		exit = fmt.Sprintf(", exit code %d", *d.ExitCode)
	}
	fmt.Fprintf(e.Stderr, "\nJob %s %s%s", d.ID, d.Status, exit)
	fmt.Fprintf(e.Stderr, " after %s", dur)
	fmt.Fprintln(e.Stderr)
	if d.StatusReason != "" && d.Status != job.Completed {
		fmt.Fprintf(e.Stderr, "Reason: %s\n", out.text(d.StatusReason))
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(e.Stderr, "warning: %s\n", out.text(w))
	}
	if len(d.Metrics) > 0 {
		fmt.Fprintf(e.Stderr, "Metrics: ")
		for i, m := range fmtMetrics(d.Metrics) {
			if i > 0 {
				fmt.Fprint(e.Stderr, ", ")
			}
			fmt.Fprint(e.Stderr, m)
		}
		fmt.Fprintln(e.Stderr)
	}
	switch d.Status {
	case job.Completed:
		return nil
	case job.Canceled:
		return &ExitError{Code: ExitCanceled}
	default:
		return &ExitError{Code: ExitFailed}
	}
}

// reconnect is what a follower does after a call failed with err: a server's answer, or ctx
// ended, ends it (err); a call nobody answered is tried again, after pause, with a new client
// when one can be made (for the local workspace, restarting it), until the server has been gone
// for 2 minutes since lostSince.
func (e *Env) reconnect(ctx context.Context, c **api.Client, lostSince *time.Time, err error, pause time.Duration) error {
	if api.IsServerError(err) || ctx.Err() != nil {
		return err
	}
	if lostSince.IsZero() {
		*lostSince = time.Now()
		fmt.Fprintf(e.Stderr, "lost the workspace server (%v); reconnecting...\n", err)
	}
	if time.Since(*lostSince) > 2*time.Minute {
		return fmt.Errorf("workspace server unreachable for 2 minutes: %w", err)
	}
	if pause > 0 {
		time.Sleep(pause)
	}
	if nc, cerr := e.client(ctx); cerr == nil {
		*c = nc
	}
	return nil
}
