package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newSettingsCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Show and change workspace settings (default compute, quotas, limits)",
		Long: `Workspace settings:
  default_compute          the target of jobs that name none (local in a new workspace)
  quota.family.<FAMILY>    the most cores runs of a size family may hold at once on clusters
  user_max_runs            the most cluster runs one user may have placed at once (0 = no limit)
  env_cache_max_bytes      the size limit of each node's environment cache`,
		Example: "  hangar settings list\n  hangar settings set quota.family.DSv3 32\n  hangar settings set user_max_runs 4",
	}
	list := leaf[map[string]string]{
		Use: "list", Short: "List the settings that are set",
		Example: "  hangar settings list -o json",
		ask: func(ctx context.Context, c *api.Client, _ []string) (map[string]string, error) {
			return c.Workspace.Settings(ctx)
		},
		human: func(w io.Writer, m map[string]string) error {
			return tableOf(w, []string{"SETTING", "VALUE"}, slices.Sorted(maps.Keys(m)), func(k string) []string { return []string{k, m[k]} })
		},
	}.cmd(env)
	set := &cobra.Command{
		Use: "set KEY VALUE", Short: "Change a setting", Args: cobra.ExactArgs(2),
		Example: "  hangar settings set quota.family.NCSv3 24",
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if err := c.Workspace.SetSetting(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Set %s = %s\n", args[0], args[1])
			return nil
		}),
	}
	cmd.AddCommand(list, set)
	return groupCmd(cmd)
}
