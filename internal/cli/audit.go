package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
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
	var from time.Time
	cmd := leaf[[]api.AuditEntry]{
		Use:     "list",
		Short:   "List audit log entries, oldest first (the last 1000)",
		Example: "  hangar audit list --user rita --since 24h",
		check: func(*cobra.Command, []string) error {
			from = time.Time{}
			if since != "" {
				var err error
				if from, err = parseSince(since, time.Now()); err != nil {
					return usageError("--since: %v", err)
				}
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]api.AuditEntry, error) {
			return c.Users.Audit(ctx, user, from)
		},
		human: func(w io.Writer, list []api.AuditEntry) error {
			return tableOf(w, []string{"TIME", "USER", "ACTION", "OBJECT", "DETAIL"}, list, func(e api.AuditEntry) []string {
				return []string{fmtTime(&e.At), e.User, e.Action, e.Object, e.Detail}
			})
		},
	}.cmd(env)
	cmd.Flags().StringVar(&user, "user", "", "only this user's changes")
	cmd.Flags().StringVar(&since, "since", "", "only changes since a duration ago (30m, 2h, 3d, 1w) or a date or time")
	return cmd
}
