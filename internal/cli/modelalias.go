package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

func newModelAliasCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alias",
		Short: "Set, delete and list a model's aliases (champion → 3), which deployments can follow",
		Long: `An alias names one version of a model (MLflow's registered model aliases: the same ones
MLflow's set_registered_model_alias sets). Deployments and jobs may name a version by alias,
azureml:NAME@ALIAS; a deployment that does follows it: when the alias moves, its replicas are
replaced by ones serving the new version (the new ones ready before the old ones stop). When the
alias is deleted it keeps serving the version it has, and its state warns. @latest is not an
alias: it is the newest version (Azure's meaning).`,
		Example: `  hangar model alias set iris champion 3
  hangar model alias list iris
  hangar model alias delete iris champion`,
	}
	cmd.AddCommand(newModelAliasSetCmd(env), newModelAliasDeleteCmd(env), newModelAliasListCmd(env))
	return groupCmd(cmd)
}

func newModelAliasSetCmd(env *Env) *cobra.Command {
	var alias string
	return leaf[*model.Version]{
		Use:   "set NAME ALIAS VERSION",
		Short: "Point an alias at a version (moving it if it named another)",
		Long: `Point ALIAS of model NAME at VERSION, moving it if it named another version; deployments that
follow NAME@ALIAS roll to VERSION. An alias is letters, digits, _ and - (at most 255); latest
(any case) and v<number> are reserved.`,
		Example: "  hangar model alias set iris champion 3",
		Args:    cobra.ExactArgs(3),
		check: func(_ *cobra.Command, args []string) error {
			alias = args[1]
			if err := model.CheckAlias(alias); err != nil {
				return usageError("%v", err)
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, args []string) (*model.Version, error) {
			return c.ModelAliases.Set(ctx, args[0], args[1], args[2])
		},
		human: func(w io.Writer, v *model.Version) error {
			_, err := fmt.Fprintf(w, "%s@%s → version %s\n", v.Name, alias, v.Version)
			return err
		},
	}.cmd(env)
}

func newModelAliasDeleteCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME ALIAS",
		Short: "Delete an alias (deployments that follow it keep serving their version)",
		Long: `Delete ALIAS of model NAME. The versions stay; deployments that follow NAME@ALIAS keep serving
the version they serve, and their state warns that the alias is gone until it is set again or the
deployment is updated to name a version.`,
		Example: "  hangar model alias delete iris champion",
		Args:    cobra.ExactArgs(2),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if err := c.ModelAliases.Delete(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Deleted alias %s of model %s\n", args[1], args[0])
			return nil
		}),
	}
}

func newModelAliasListCmd(env *Env) *cobra.Command {
	return leaf[[]api.ModelAlias]{
		Use:     "list NAME",
		Short:   "List a model's aliases and the versions they name",
		Example: "  hangar model alias list iris\n  hangar model alias list iris -o json",
		Args:    cobra.ExactArgs(1),
		ask: func(ctx context.Context, c *api.Client, args []string) ([]api.ModelAlias, error) {
			return c.ModelAliases.List(ctx, args[0])
		},
		human: func(w io.Writer, as []api.ModelAlias) error {
			return tableOf(w, []string{"ALIAS", "VERSION"}, as, func(a api.ModelAlias) []string { return []string{a.Alias, a.Version} })
		},
	}.cmd(env)
}
