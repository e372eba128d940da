package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newJobArchiveCmd(env *Env, archive bool) *cobra.Command {
	use, short, example := "archive NAME", "Hide a job from job list (job list --archived shows it; job restore brings it back)",
		"  hangar job archive plucky_otter_k3x9q2mz\n  hangar job list --archived"
	if !archive {
		use, short, example = "restore NAME", "Show an archived job in job list again",
			"  hangar job restore plucky_otter_k3x9q2mz"
	}
	cmd := &cobra.Command{Use: use, Short: short, Example: example}
	name := addNameArg(cmd, "job", jobNames, env)
	cmd.RunE = env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
		d, err := c.Jobs.Archive(cmd.Context(), name.name, archive)
		if err != nil {
			return err
		}
		return env.printData(d, func(w io.Writer) error {
			if archive {
				_, err := fmt.Fprintf(w, "Archived job %s: job list leaves it out (see it with --archived)\n", d.ID)
				return err
			}
			_, err := fmt.Fprintf(w, "Restored job %s to job list\n", d.ID)
			return err
		})
	})
	return cmd
}

func newJobDeleteCmd(env *Env) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an ended job with its events, logs and metrics",
		Long: `Delete a job that has ended (Completed, Failed or Canceled): its record, status events, log
lines and metrics are removed from the workspace. Its files (code snapshot, outputs, artifacts)
stay in the workspace's blob store: they are stored by content and may be shared with other
jobs, and Hangar has no collector of unreferenced blobs yet, so deleting jobs frees no disk.
To only hide a job from job list, use job archive.

On a terminal it asks first; elsewhere it refuses unless --yes is given.`,
		Example: "  hangar job delete plucky_otter_k3x9q2mz\n  hangar job delete -n plucky_otter_k3x9q2mz --yes",
	}
	name := addNameArg(cmd, "job", jobNames, env)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.RunE = env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
		q := fmt.Sprintf("Delete job %s with its events, logs and metrics? This cannot be undone.", name.name)
		if err := env.confirm(yes, q, "delete job "+name.name); err != nil {
			return err
		}
		if err := c.Jobs.Delete(cmd.Context(), name.name); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "Deleted job %s\n", name.name)
		return nil
	})
	return cmd
}
