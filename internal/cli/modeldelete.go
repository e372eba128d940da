package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

func newModelDeleteCmd(env *Env) *cobra.Command {
	var name, version string
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a model version, or a model with every version",
		Long: `Delete one version (--version) or the whole model: its versions, its tags and aliases, as MLflow's
model-versions/delete and registered-models/delete do. A deleted version leaves model list,
@latest and every reference, and MLflow's registry; its number is never given again (a model
registered again under the name goes on from it). Deployments and jobs that use it keep the
files they were given, which stay in the blob store while they do. To only hide a version from
model list and @latest, use model archive.

On a terminal it asks first; elsewhere it refuses unless --yes is given.`,
		Example: "  hangar model delete mnist --version 3\n  hangar model delete -n mnist --yes",
		Args:    nameArgs(&name, "model"),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			what := "model " + name + " with every version, its tags and aliases"
			if version != "" {
				v, err := model.ParseVersion(version)
				if err != nil {
					return usageError("--version: %v", err)
				}
				version, what = v, "model "+name+" version "+v
			}
			if err := env.confirm(yes, fmt.Sprintf("Delete %s? This cannot be undone.", what), "delete "+what); err != nil {
				return err
			}
			if err := c.Models.Delete(cmd.Context(), name, version); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Deleted %s\n", what)
			return nil
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "model name (or give it as the first argument)")
	cmd.Flags().StringVarP(&version, "version", "v", "", "one version (default: the model, every version)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
