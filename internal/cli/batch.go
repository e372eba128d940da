package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newBatchEndpointCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "batch-endpoint",
		Short: "Score files in batch: an endpoint whose invoke runs a parallel job of one of its deployments",
		Long: `A batch endpoint names a set of batch deployments. invoke runs one of them (its default unless
--deployment-name) as a parallel job over a folder or file: the deployment's scoring script's
run(mini_batch) is called on mini-batches of files on its compute cluster, and the rows it
returns are the job's output "score" (hangar job download -n JOB --output-name score).
The workspace token opens batch endpoints (Azure's aad_token).`,
		Example: `  hangar batch-endpoint create -f endpoint.yml
  hangar batch-deployment create -f deployment.yml --set-default
  hangar batch-endpoint invoke -n mnist-batch --input ./images
  hangar batch-endpoint list-jobs -n mnist-batch`,
	}
	cmd.AddCommand(newBatchEndpointPutCmd(env, false), newBatchEndpointPutCmd(env, true), newBatchEndpointShowCmd(env),
		newBatchEndpointListCmd(env), newBatchEndpointDeleteCmd(env), newBatchInvokeCmd(env), newBatchListJobsCmd(env))
	return groupCmd(cmd)
}

func newBatchEndpointPutCmd(env *Env, update bool) *cobra.Command {
	var file, name string
	var sets []string
	var noWait bool
	use, short := "create", "Create a batch endpoint from a YAML file, or with --name alone"
	example := "  hangar batch-endpoint create -f endpoint.yml\n  hangar batch-endpoint create -n mnist-batch"
	if update {
		use, short = "update", "Update a batch endpoint from a YAML file, or its stored definition with --set"
		example = "  hangar batch-endpoint update -f endpoint.yml\n  hangar batch-endpoint update -n mnist-batch --set defaults.deployment_name=mnist-torch"
	}
	cmd := leaf[*api.BatchEndpointView]{
		Use:     use,
		Short:   short,
		Example: example,
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.BatchEndpointView, error) {
			e, err := batchEndpointSpec(ctx, env, c, file, name, sets, update)
			if err != nil {
				return nil, err
			}
			put := c.BatchEndpoints.Create
			if update {
				put = c.BatchEndpoints.Update
			}
			v, err := put(ctx, *e)
			return v, fileError(file, err)
		},
		human: func(w io.Writer, v *api.BatchEndpointView) error {
			_, err := fmt.Fprintf(w, "Batch endpoint %s: %s\n", v.Name, v.ProvisioningState)
			return err
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&file, "file", "f", "", "batch endpoint YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "name (default: from the file)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field: --set key.path=value (repeatable)")
	addNoWaitFlag(cmd, &noWait)
	return cmd
}

// batchEndpointSpec is the endpoint a create or update sends: from its file, from --name alone
// (a create), or the stored one with --set applied (an update without a file).
func batchEndpointSpec(ctx context.Context, env *Env, c *api.Client, file, name string, sets []string, update bool) (*serving.BatchEndpoint, error) {
	if file == "" && update {
		if name == "" || len(sets) == 0 {
			return nil, usageError("give --file (-f), or --name and the fields to change with --set key=value")
		}
		v, err := c.BatchEndpoints.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		e := v.BatchEndpoint
		return &e, applyStoredSets(&e, sets, batchEndpointKind)
	}
	return specFromFileOrName(env, file, name, sets, spec.ParseBatchEndpoint, spec.ParseBatchEndpointFile,
		func(e *serving.BatchEndpoint, n string) { e.Name = n })
}

func newBatchEndpointShowCmd(env *Env) *cobra.Command {
	var name string
	var deps []api.BatchDeploymentView // printed after the endpoint, not with -o
	cmd := leaf[*api.BatchEndpointView]{
		Use:     "show",
		Short:   "Show a batch endpoint and its deployments",
		Example: "  hangar batch-endpoint show -n mnist-batch -o yaml",
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.BatchEndpointView, error) {
			return withDeployments(ctx, name, c.BatchEndpoints.Get, c.BatchDeployments.List, &deps)
		},
		human: func(w io.Writer, v *api.BatchEndpointView) error {
			fmt.Fprintf(w, "Name:         %s\nDescription:  %s\nAuth:         %s (the workspace token)\nDefault:      %s\nDeployments:\n",
				v.Name, v.Description, v.AuthMode, noneIfEmpty(v.DefaultDeployment))
			for _, d := range deps {
				fmt.Fprintf(w, "  %s  compute %s  %d instance(s)  %s\n", d.Name, d.Compute, d.InstanceCount, modelText(d.Model))
			}
			return nil
		},
	}.cmd(env)
	addNameTarget(cmd, &name, "batch endpoint name")
	return cmd
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func newBatchEndpointListCmd(env *Env) *cobra.Command {
	return listCmd(env, "List the batch endpoints", "  hangar batch-endpoint list -o json",
		func(ctx context.Context, c *api.Client) ([]api.BatchEndpointView, error) {
			return c.BatchEndpoints.List(ctx)
		},
		[]string{"NAME", "DEFAULT DEPLOYMENT", "DESCRIPTION"},
		func(e api.BatchEndpointView) []string {
			return []string{e.Name, noneIfEmpty(e.DefaultDeployment), e.Description}
		})
}

func newBatchEndpointDeleteCmd(env *Env) *cobra.Command {
	return newServingDeleteCmd(env, servingDelete{
		short:   "Delete a batch endpoint and its deployments (their jobs stay)",
		example: "  hangar batch-endpoint delete -n mnist-batch --yes",
		what:    "batch endpoint", also: " and its deployments", nameHelp: "batch endpoint name",
		del: func(ctx context.Context, c *api.Client, name, _ string) error {
			return c.BatchEndpoints.Delete(ctx, name)
		},
	})
}

// listScoringJobs is list-jobs of a batch endpoint or deployment: the jobs carrying its tags,
// newest first (the last 50), as job list --all shows them.
func (e *Env) listScoringJobs(cmd *cobra.Command, tags ...string) error {
	f := listFlags{all: true}
	f.q.Tags = tags
	f.q.Limit = 50
	return e.listJobs(cmd, f)
}

func newBatchListJobsCmd(env *Env) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:     "list-jobs",
		Short:   "List a batch endpoint's scoring jobs, newest first",
		Example: "  hangar batch-endpoint list-jobs -n mnist-batch",
		Args:    cobra.NoArgs,
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if _, err := c.BatchEndpoints.Get(cmd.Context(), name); err != nil {
				return err
			}
			return env.listScoringJobs(cmd, serving.TagBatchEndpoint+"="+name)
		}),
	}
	addNameTarget(cmd, &name, "batch endpoint name")
	return cmd
}
