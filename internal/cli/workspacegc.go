package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newWorkspaceGCCmd(env *Env) *cobra.Command {
	var dryRun bool
	var grace time.Duration
	var req api.GCRequest
	cmd := leaf[*api.GCReport]{
		Use:   "gc",
		Short: "Free the workspace's blobs that nothing references (owners only)",
		Long: `Free the blobs (code snapshots, inputs, outputs, logs, model files) that no job, model,
environment, data asset, component, datastore path, pipeline step or deployment references.
The workspace's server does it, at the address the CLI uses; it also does it by itself every
--gc-every (24h by default). Deleting a job frees what only that job used already.

A blob younger than the grace (the server's --blob-grace, 1h by default, or --grace) stays
whatever references it: a job being submitted uploads its files before it is created. A blob
the server said it had counts as young from then on. --dry-run lists what would be freed and
how many bytes, and frees nothing.`,
		Example: `  hangar workspace gc --dry-run
  hangar workspace gc
  hangar workspace gc --grace 24h -o json`,
		check: func(cmd *cobra.Command, _ []string) error {
			req = api.GCRequest{DryRun: dryRun}
			if cmd.Flags().Changed("grace") {
				if grace < 0 {
					return usageError("--grace: want 0 or more, got %s", grace)
				}
				s := int64(grace / time.Second)
				req.GraceSeconds = &s
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.GCReport, error) {
			return c.Workspace.CollectBlobs(ctx, req)
		},
		human: printGC,
	}.cmd(env)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be freed, and free nothing")
	cmd.Flags().DurationVar(&grace, "grace", 0, "keep every blob younger than this (default: the server's --blob-grace)")
	return cmd
}

// printGC lists the blobs a collection freed (or would free), largest first, and the totals.
func printGC(w io.Writer, rep *api.GCReport) error {
	rows := make([][]string, 0, len(rep.Blobs))
	for _, b := range rep.Blobs {
		rows = append(rows, []string{b.Hash, humanBytes(b.Size)})
	}
	if len(rows) > 0 {
		if err := table(w, []string{"BLOB", "SIZE"}, rows); err != nil {
			return err
		}
	}
	verb := "Freed"
	if rep.DryRun {
		verb = "Would free"
	}
	_, err := fmt.Fprintf(w, "%s %d blobs (%s); kept %d (%s), referenced or younger than %s\n",
		verb, rep.Count, humanBytes(rep.Bytes), rep.Kept, humanBytes(rep.KeptBytes), rep.Grace)
	return err
}
