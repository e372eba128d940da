package cli

import (
	"io"
	"time"

	"github.com/spf13/cobra"
)

func newAuditCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the workspace's audit log (owners only)",
		Long: `The audit log records who changed what: computes (create, update, delete, start, stop,
restart), nodes and sizes, secrets (set, delete, key rotation; never values), settings, users,
roles, personal tokens (create, revoke) and deletions of jobs, assets and endpoints.`,
		Example: "  hangar audit list\n  hangar audit list --user rita --since 24h\n  hangar audit list --since 2026-11-01T00:00:00Z -o json",
	}
	cmd.AddCommand(newAuditListCmd(env))
	return groupCmd(cmd)
}

func newAuditListCmd(env *Env) *cobra.Command {
	var user, since string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List audit log entries, oldest first (the last 1000)",
		Example: "  hangar audit list --user rita --since 24h",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var from time.Time
			if since != "" {
				var err error
				if from, err = parseSince(since, time.Now()); err != nil {
					return usageError("--since: %v", err)
				}
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.Users.Audit(cmd.Context(), user, from)
			if err != nil {
				return err
			}
			return env.printData(list, func(w io.Writer) error {
				rows := make([][]string, 0, len(list))
				for _, e := range list {
					rows = append(rows, []string{fmtTime(&e.At), e.User, e.Action, e.Object, e.Detail})
				}
				return table(w, []string{"TIME", "USER", "ACTION", "OBJECT", "DETAIL"}, rows)
			})
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "only this user's changes")
	cmd.Flags().StringVar(&since, "since", "", "only changes since a duration ago (30m, 2h, 3d, 1w) or a date or time")
	return cmd
}
