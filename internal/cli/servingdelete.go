package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

// servingDelete is the delete verb of an endpoint (online or batch) or of one of its deployments:
// it asks on a terminal, else needs --yes; a deployment is named by -n and its endpoint by -e.
type servingDelete struct {
	short, example string
	what           string // "online endpoint", "deployment", "batch endpoint", "batch deployment"
	also           string // what else goes with an endpoint, in the question (" and its deployments")
	nameHelp       string
	endpointHelp   string // "" for an endpoint's own delete (no -e)
	del            func(ctx context.Context, c *api.Client, name, endpoint string) error
}

func newServingDeleteCmd(env *Env, d servingDelete) *cobra.Command {
	var name, endpoint string
	var yes, noWait bool
	cmd := &cobra.Command{
		Use:     "delete",
		Short:   d.short,
		Example: d.example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			named := name + d.also
			if d.endpointHelp != "" {
				named = name + " of " + endpoint
			}
			if err := env.confirm(yes, fmt.Sprintf("Delete %s %s?", d.what, named), "delete "+d.what+" "+name); err != nil {
				return err
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			if err := d.del(cmd.Context(), c, name, endpoint); err != nil {
				return err
			}
			done := name
			if d.endpointHelp != "" {
				done = name + " of " + endpoint
			}
			fmt.Fprintf(env.Stdout, "Deleted %s %s\n", d.what, done)
			return nil
		},
	}
	addNameTarget(cmd, &name, d.nameHelp)
	if d.endpointHelp != "" {
		addEndpointTarget(cmd, &endpoint, d.endpointHelp)
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	addNoWaitFlag(cmd, &noWait)
	return cmd
}
