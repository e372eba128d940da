package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
)

func newOnlineDeploymentCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "online-deployment",
		Short: "Deploy a model behind an online endpoint (replicas that run as runs on a compute target)",
		Long: `A deployment is a model, an environment and a scoring script (code_configuration: init() and
run(raw_data), served by Hangar's scoring server), an mlflow_model with no script (served by
Hangar's built-in MLflow scorer: MLflow's and Azure's payloads), a command that serves on $PORT,
or an image whose own entrypoint serves where its inference_config says. Each replica
is a run on the deployment's compute target (compute: in the file, else the endpoint's, else the
workspace default): its logs are get-logs, and a replica that crashes is replaced with backoff.`,
		Example: `  hangar online-deployment create -f blue.yml --all-traffic
  hangar online-deployment show -n blue -e my-endpoint
  hangar online-deployment get-logs -n blue -e my-endpoint --lines 50`,
	}
	cmd.AddCommand(newDeploymentCreateCmd(env, false), newDeploymentCreateCmd(env, true), newDeploymentShowCmd(env),
		newDeploymentListCmd(env), newDeploymentDeleteCmd(env), newDeploymentLogsCmd(env))
	return groupCmd(cmd)
}

func newDeploymentCreateCmd(env *Env, update bool) *cobra.Command {
	var f deploymentFlags
	var allTraffic, noWait bool
	var timeout time.Duration
	use, short := "create", "Create a deployment from a YAML file and wait until a replica answers"
	if update {
		use, short = "update", "Update a deployment from a YAML file, or its stored definition with --set: new replicas replace the old ones once ready"
	}
	cmd := leaf[*api.DeploymentView]{
		Use:     use,
		Short:   short,
		Example: fmt.Sprintf("  hangar online-deployment %s -f blue.yml", use),
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.DeploymentView, error) {
			d, err := onlineDeploymentSource.read(ctx, env, c, f)
			if err != nil {
				return nil, err
			}
			var v *api.DeploymentView
			if update {
				v, err = c.Deployments.Update(ctx, *d)
			} else {
				v, err = c.Deployments.Create(ctx, *d, allTraffic)
			}
			if err != nil {
				return nil, fileError(f.file, err)
			}
			if noWait {
				return v, nil
			}
			return waitDeployment(ctx, env, c, d.Endpoint, d.Name, v.Generation, timeout)
		},
		human: func(w io.Writer, v *api.DeploymentView) error {
			_, err := fmt.Fprintf(w, "Deployment %s of endpoint %s: %s (%s)\n", v.Name, v.Endpoint, v.ProvisioningState, v.Reason)
			return err
		},
	}.cmd(env)
	f.add(cmd, "online deployment YAML file")
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "return once stored, without waiting for a replica")
	cmd.Flags().DurationVar(&timeout, "timeout", 15*time.Minute, "how long to wait for a replica to answer")
	if !update {
		cmd.Flags().BoolVar(&allTraffic, "all-traffic", false, "send every request of the endpoint to this deployment")
		_ = cmd.MarkFlagRequired("file")
	} else {
		cmd.Example += "\n  hangar online-deployment update -n blue -e my-endpoint --set instance_count=2"
	}
	return cmd
}

// uploadDeployment uploads the deployment's code folder and its inline model's files.
func uploadDeployment(ctx context.Context, env *Env, c *api.Client, d *serving.Deployment) error {
	if d.Code == "" && d.Model.Path == "" {
		return nil
	}
	u := env.newUploader(c)
	defer u.close()
	if d.Code != "" {
		h, err := u.code(ctx, d.Code)
		if err != nil {
			return err
		}
		d.CodeSnapshot = h
	}
	if d.Model.Path != "" {
		st, err := os.Stat(d.Model.Path)
		if err != nil {
			return usageError("model.path: %v", err)
		}
		h, err := u.data(ctx, "model", d.Model.Path, !st.IsDir())
		if err != nil {
			return err
		}
		d.Model.Manifest = h
		if st.IsDir() {
			d.Model.Folder = filepath.Base(d.Model.Path)
		}
	}
	return nil
}

// waitDeployment polls a deployment until its generation has a ready replica or it failed.
func waitDeployment(ctx context.Context, env *Env, c *api.Client, endpoint, name string, gen int, timeout time.Duration) (*api.DeploymentView, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		v, err := c.Deployments.Get(ctx, endpoint, name)
		if err != nil {
			return nil, err
		}
		if line := v.ProvisioningState + ": " + v.Reason; line != last {
			fmt.Fprintf(env.Stderr, "%s\n", line)
			last = line
		}
		switch {
		case v.Generation != gen:
			return v, fmt.Errorf("deployment %s was updated again meanwhile (generation %d)", name, v.Generation)
		case v.ProvisioningState == "Succeeded":
			return v, nil
		case v.ProvisioningState == "Failed":
			return v, fmt.Errorf("deployment %s of %s failed: %s (its replicas' logs: hangar online-deployment get-logs -n %s -e %s)",
				name, endpoint, v.Reason, name, endpoint)
		}
		select {
		case <-ctx.Done():
			return v, fmt.Errorf("deployment %s of %s is still %s after %s: %s", name, endpoint, v.ProvisioningState, timeout, v.Reason)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func newDeploymentShowCmd(env *Env) *cobra.Command {
	var name, endpoint string
	cmd := leaf[*api.DeploymentView]{
		Use:     "show",
		Short:   "Show a deployment: its state, replicas (runs) and settings",
		Example: "  hangar online-deployment show -n blue -e my-endpoint",
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.DeploymentView, error) {
			return c.Deployments.Get(ctx, endpoint, name)
		},
		human: func(w io.Writer, v *api.DeploymentView) error {
			fmt.Fprintf(w, "Name:        %s\nEndpoint:    %s\nState:       %s (%s)\nCompute:     %s\nInstances:   %d (scale %s)\nModel:       %s\n",
				v.Name, v.Endpoint, v.ProvisioningState, v.Reason, v.Compute, v.InstanceCount, v.Scale.Type, modelText(v.Model))
			if a := v.ModelAlias; a != nil {
				fmt.Fprintf(w, "Follows:     alias %s of model %s (%s); serving version %s\n", a.Alias, a.Model, aliasNow(a), a.Serving)
				if a.Warning != "" {
					fmt.Fprintf(w, "Warning:     %s\n", a.Warning)
				}
			}
			fmt.Fprintln(w, "Replicas:")
			for _, r := range v.Replicas {
				fmt.Fprintf(w, "  %s  %s  %s  generation %d  %s\n", r.Run, r.Status, r.Address, r.Generation, r.Reason)
			}
			return nil
		},
	}.cmd(env)
	addDeploymentTarget(cmd, &name, &endpoint, "endpoint name")
	return cmd
}

// aliasNow says where a followed alias points now.
func aliasNow(a *api.FollowedAlias) string {
	if a.AliasVersion == "" {
		return "the alias is gone"
	}
	return "it names version " + a.AliasVersion
}

// followsAlias says a model reference names an alias (name@champion).
func followsAlias(ref string) bool {
	r, err := model.ParseRef(ref, false)
	return err == nil && r.Alias != ""
}

func modelText(m serving.ModelRef) string {
	switch {
	case m.Ref != "" && m.Version != "" && followsAlias(m.Ref):
		return "azureml:" + m.Ref + " (version " + m.Version + ")" // and what the alias resolved
	case m.Ref != "":
		return "azureml:" + m.Ref
	case m.Manifest != "":
		return "inline (" + m.Manifest[:min(12, len(m.Manifest))] + ")"
	}
	return "none"
}

func newDeploymentListCmd(env *Env) *cobra.Command {
	var endpoint string
	cmd := leaf[[]api.DeploymentView]{
		Use:     "list",
		Short:   "List an endpoint's deployments",
		Example: "  hangar online-deployment list -e my-endpoint",
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]api.DeploymentView, error) {
			return c.Deployments.List(ctx, endpoint)
		},
		human: printDeployments,
	}.cmd(env)
	addEndpointTarget(cmd, &endpoint, "endpoint name")
	return cmd
}

func newDeploymentDeleteCmd(env *Env) *cobra.Command {
	return newServingDeleteCmd(env, servingDelete{
		short:   "Delete a deployment that takes no traffic (its replicas stop)",
		example: "  hangar online-deployment delete -n blue -e my-endpoint --yes",
		what:    "deployment", nameHelp: "deployment name", endpointHelp: "endpoint name",
		del: func(ctx context.Context, c *api.Client, name, endpoint string) error {
			return c.Deployments.Delete(ctx, endpoint, name)
		},
	})
}

func newDeploymentLogsCmd(env *Env) *cobra.Command {
	var name, endpoint string
	var lines int
	var raw bool
	cmd := &cobra.Command{
		Use:     "get-logs",
		Short:   "Print the output of a deployment's newest replica (its run's std_log.txt)",
		Example: "  hangar online-deployment get-logs -n blue -e my-endpoint --lines 100",
		Args:    cobra.NoArgs,
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			v, err := c.Deployments.Get(cmd.Context(), endpoint, name)
			if err != nil {
				return err
			}
			run, what := logsReplica(v)
			if run == "" {
				return fmt.Errorf("deployment %s of %s has no replica now (%s: %s)", name, endpoint, v.ProvisioningState, v.Reason)
			}
			var all []string
			for after := int64(0); ; {
				r, err := c.Jobs.Logs(cmd.Context(), run, "", after, 0)
				if err != nil {
					return err
				}
				for _, l := range r.Lines {
					all = append(all, l.Text)
				}
				if len(r.Lines) == 0 || r.Next == after {
					break
				}
				after = r.Next
			}
			if lines > 0 && len(all) > lines {
				all = all[len(all)-lines:]
			}
			fmt.Fprintf(env.Stderr, "%s %s (all of it: hangar job stream -n %s):\n", what, run, run)
			out := newRunOutput(env.Stdout, raw) // termsafe.go
			for _, l := range all {
				out.line(l)
			}
			return nil
		}),
	}
	addDeploymentTarget(cmd, &name, &endpoint, "endpoint name")
	cmd.Flags().IntVarP(&lines, "lines", "l", 0, "only the last N lines")
	addRawFlag(cmd, &raw)
	return cmd
}

// logsReplica is the replica whose output get-logs shows: the newest one serving, else the last
// one that failed (why the deployment does not answer), else the newest one starting.
func logsReplica(v *api.DeploymentView) (run, what string) {
	for i := len(v.Replicas) - 1; i >= 0; i-- {
		if r := v.Replicas[i]; r.Status == "Running" && r.Address != "" {
			return r.Run, "replica"
		}
	}
	if v.LastFailedReplica != "" {
		return v.LastFailedReplica, "last failed replica"
	}
	if n := len(v.Replicas); n > 0 {
		return v.Replicas[n-1].Run, "replica (starting)"
	}
	return "", ""
}
