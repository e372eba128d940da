package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/serving"
)

func newBatchDeploymentCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "batch-deployment",
		Short: "Deploy a model for batch scoring behind a batch endpoint (parallel jobs on a cluster)",
		Long: `A batch deployment is a model, a scoring script (code_configuration: init() and run(mini_batch),
mini_batch a list of file paths), an environment, a compute cluster and the parallel settings
(mini_batch_size, max_concurrency_per_instance, retry_settings, error_threshold, output_action).
Nothing runs until batch-endpoint invoke.`,
		Example: `  hangar batch-deployment create -f deployment.yml --set-default
  hangar batch-deployment show -n mnist-torch -e mnist-batch
  hangar batch-deployment list -e mnist-batch`,
	}
	cmd.AddCommand(newBatchDeploymentPutCmd(env, false), newBatchDeploymentPutCmd(env, true), newBatchDeploymentShowCmd(env),
		newBatchDeploymentListCmd(env), newBatchDeploymentDeleteCmd(env), newBatchDeploymentListJobsCmd(env))
	return groupCmd(cmd)
}

func newBatchDeploymentPutCmd(env *Env, update bool) *cobra.Command {
	var f deploymentFlags
	var setDefault, noWait bool
	use, short := "create", "Create a batch deployment from a YAML file (the endpoint's first becomes its default)"
	if update {
		use, short = "update", "Update a batch deployment from a YAML file, or its stored definition with --set (jobs already queued keep the old one)"
	}
	cmd := leaf[*api.BatchDeploymentView]{
		Use:     use,
		Short:   short,
		Example: fmt.Sprintf("  hangar batch-deployment %s -f deployment.yml --set-default", use),
		check: func(*cobra.Command, []string) error {
			if f.file == "" && !update {
				return usageError("give --file (-f)")
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.BatchDeploymentView, error) {
			d, err := batchDeploymentSource.read(ctx, env, c, f)
			if err != nil {
				return nil, err
			}
			v, err := c.BatchDeployments.Put(ctx, *d, !update, setDefault)
			return v, fileError(f.file, err)
		},
		human: func(w io.Writer, v *api.BatchDeploymentView) error {
			_, err := fmt.Fprintf(w, "Batch deployment %s of %s: %s\n", v.Name, v.Endpoint, v.ProvisioningState)
			return err
		},
	}.cmd(env)
	f.add(cmd, "batch deployment YAML file")
	cmd.Flags().BoolVar(&setDefault, "set-default", false, "make it the endpoint's default deployment")
	addNoWaitFlag(cmd, &noWait)
	if update {
		cmd.Example += "\n  hangar batch-deployment update -n mnist-torch -e mnist-batch --set settings.mini_batch_size=20"
	} else {
		_ = cmd.MarkFlagRequired("file")
	}
	return cmd
}

// uploadBatchDeployment uploads the code folder and an inline model's files, as for an online
// deployment.
func uploadBatchDeployment(ctx context.Context, env *Env, c *api.Client, d *serving.BatchDeployment) error {
	online := serving.Deployment{Code: d.Code, Model: d.Model}
	if err := uploadDeployment(ctx, env, c, &online); err != nil {
		return err
	}
	d.CodeSnapshot, d.Model = online.CodeSnapshot, online.Model
	return nil
}

func newBatchDeploymentShowCmd(env *Env) *cobra.Command {
	var name, endpoint string
	cmd := leaf[*api.BatchDeploymentView]{
		Use:     "show",
		Short:   "Show a batch deployment and its settings",
		Example: "  hangar batch-deployment show -n mnist-torch -e mnist-batch -o yaml",
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.BatchDeploymentView, error) {
			return c.BatchDeployments.Get(ctx, endpoint, name)
		},
		human: func(w io.Writer, v *api.BatchDeploymentView) error {
			st := v.Settings
			_, err := fmt.Fprintf(w, "Name:         %s\nEndpoint:     %s\nModel:        %s\nScript:       %s\nCompute:      %s (%d instance(s))\n"+
				"Mini-batches: %d files, %d per instance at once, %d retries, %ds timeout, error threshold %d\nOutput:       %s %s\n",
				v.Name, v.Endpoint, modelText(v.Model), v.ScoringScript, v.Compute, v.InstanceCount,
				st.MiniBatchSize, st.MaxConcurrencyPerInstance, st.MaxRetries, st.Timeout, st.ErrorThreshold, st.OutputAction, st.OutputFileName)
			return err
		},
	}.cmd(env)
	addDeploymentTarget(cmd, &name, &endpoint, "batch endpoint name")
	return cmd
}

func newBatchDeploymentListCmd(env *Env) *cobra.Command {
	var endpoint string
	cmd := leaf[[]api.BatchDeploymentView]{
		Use:     "list",
		Short:   "List a batch endpoint's deployments",
		Example: "  hangar batch-deployment list -e mnist-batch",
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]api.BatchDeploymentView, error) {
			return c.BatchDeployments.List(ctx, endpoint)
		},
		human: func(w io.Writer, deps []api.BatchDeploymentView) error {
			return tableOf(w, []string{"NAME", "COMPUTE", "INSTANCES", "MODEL", "OUTPUT"}, deps, func(d api.BatchDeploymentView) []string {
				return []string{d.Name, d.Compute, fmt.Sprint(d.InstanceCount), modelText(d.Model), d.Settings.OutputAction}
			})
		},
	}.cmd(env)
	addEndpointTarget(cmd, &endpoint, "batch endpoint name")
	return cmd
}

func newBatchDeploymentDeleteCmd(env *Env) *cobra.Command {
	return newServingDeleteCmd(env, servingDelete{
		short:   "Delete a batch deployment that is not its endpoint's default (its jobs stay)",
		example: "  hangar batch-deployment delete -n old -e mnist-batch --yes",
		what:    "batch deployment", nameHelp: "deployment name", endpointHelp: "batch endpoint name",
		del: func(ctx context.Context, c *api.Client, name, endpoint string) error {
			return c.BatchDeployments.Delete(ctx, endpoint, name)
		},
	})
}

func newBatchDeploymentListJobsCmd(env *Env) *cobra.Command {
	var name, endpoint string
	cmd := &cobra.Command{
		Use:     "list-jobs",
		Short:   "List the scoring jobs a batch deployment ran, newest first",
		Example: "  hangar batch-deployment list-jobs -n mnist-torch -e mnist-batch\n  hangar batch-deployment list-jobs -n mnist-torch -e mnist-batch --query \"[].name\" -o tsv",
		Args:    cobra.NoArgs,
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if _, err := c.BatchDeployments.Get(cmd.Context(), endpoint, name); err != nil {
				return err
			}
			return env.listScoringJobs(cmd, serving.TagBatchEndpoint+"="+endpoint, serving.TagBatchDeployment+"="+name)
		}),
	}
	addDeploymentTarget(cmd, &name, &endpoint, "batch endpoint name")
	return cmd
}
