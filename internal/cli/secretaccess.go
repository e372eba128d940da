package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/binding"
)

// accessFlags are who may use a secret, as secret set and secret access take them.
type accessFlags struct {
	users, roles []string
	open         bool
}

func (f *accessFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.users, "allow-user", nil, "limit the secret to this user, and owners (repeatable)")
	cmd.Flags().StringArrayVar(&f.roles, "allow-role", nil, "limit the secret to the users of this role, and owners (repeatable)")
}

// given reports whether any flag limits the secret.
func (f *accessFlags) given() bool { return len(f.users) > 0 || len(f.roles) > 0 }

func (f *accessFlags) access() api.SecretAccess {
	return api.SecretAccess{Users: f.users, Roles: f.roles}
}

func newSecretAccessCmd(env *Env) *cobra.Command {
	var f accessFlags
	cmd := &cobra.Command{
		Use:   "access NAME",
		Short: "Limit who may use a secret in their jobs, or open it to every submitter",
		Long: `Set who may name a secret in their jobs, leaving its value as it is. Owners always may. With
--allow-user and --allow-role (each repeatable) only those users, and the users of those roles, may;
--open lets every user who may submit jobs use it again. The list replaces the one before.

A job naming a secret its submitter may not use is refused at submit. A run that was submitted
before is checked again when it fetches the values, and fails in Preparing if its submitter may no
longer use one. A sweep's trials and a pipeline's steps count as their parent's submitter's; a
deployment's replicas as the user's who last created or updated the deployment.`,
		Example: `  hangar secret access db_password --allow-user rita --allow-role owner
  hangar secret access hf_token --allow-role contributor
  hangar secret access hf_token --open`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := binding.CheckSecretName(name); err != nil {
				return usageError("%v", err)
			}
			switch {
			case f.open && f.given():
				return usageError("--open lets every submitter use %s; give it without --allow-user or --allow-role", name)
			case !f.open && !f.given():
				return usageError("say who may use %s: --allow-user NAME, --allow-role ROLE (repeatable), or --open", name)
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			info, err := c.Secrets.SetAccess(cmd.Context(), name, f.access())
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Secret %s may be used by %s\n", name, info.Access)
			if env.Output != "table" {
				return env.printData(info, nil)
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&f.open, "open", false, "let every user who may submit jobs use the secret")
	return cmd
}
