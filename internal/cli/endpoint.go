package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newOnlineEndpointCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "online-endpoint",
		Short: "Create and call online endpoints (a scoring URI whose traffic is split between deployments)",
		Long: `An online endpoint is a stable scoring URI on the workspace server,
<server>/endpoints/<name>/score, opened by its key (auth_mode: key) or by a short-lived
token (auth_mode: aml_token) from get-credentials. Its traffic is split between its
deployments (hangar online-deployment), and may be mirrored to one.`,
		Example: `  hangar online-endpoint create -f endpoint.yml
  hangar online-deployment create -f blue.yml --all-traffic
  hangar online-endpoint invoke -n my-endpoint --request-file sample.json
  hangar online-endpoint update -n my-endpoint --traffic "blue=90 green=10"`,
	}
	cmd.AddCommand(newEndpointCreateCmd(env), newEndpointUpdateCmd(env), newEndpointShowCmd(env), newEndpointListCmd(env),
		newEndpointDeleteCmd(env), newEndpointCredentialsCmd(env), newEndpointRegenerateCmd(env), newEndpointInvokeCmd(env))
	return groupCmd(cmd)
}

func newEndpointCreateCmd(env *Env) *cobra.Command {
	var file, name string
	var sets []string
	var noWait bool
	var fields *flagFields
	var e *serving.Endpoint
	cmd := leaf[*api.EndpointView]{
		Use:     "create",
		Short:   "Create an online endpoint from a YAML file, or with --name (and --auth-mode) alone",
		Example: "  hangar online-endpoint create -f endpoint.yml\n  hangar online-endpoint create -f endpoint.yml --name my-endpoint\n  hangar online-endpoint create -n my-endpoint --auth-mode key",
		check: func(*cobra.Command, []string) error {
			flagSets, err := fields.sets()
			if err != nil {
				return err
			}
			e, err = endpointFromFileOrFlags(env, file, name, append(flagSets, sets...))
			return err
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.EndpointView, error) {
			v, err := c.Endpoints.Create(ctx, *e)
			return v, fileError(file, err)
		},
		human: func(w io.Writer, v *api.EndpointView) error {
			_, err := fmt.Fprintf(w, "Created online endpoint %s (auth_mode %s)\nScoring URI: %s\nNext: hangar online-deployment create -f DEPLOYMENT.yml --all-traffic\n",
				v.Name, v.AuthMode, v.ScoringURI)
			return err
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&file, "file", "f", "", "online endpoint YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "name (default: from the file)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field: --set key.path=value (repeatable)")
	fields = addFlagFields(cmd, []flagField{{flag: "auth-mode", field: "auth_mode", help: "key (default) or aml_token"}})
	addNoWaitFlag(cmd, &noWait)
	return cmd
}

// endpointFromFileOrFlags reads an endpoint's file, or makes one of --name and sets alone.
func endpointFromFileOrFlags(env *Env, file, name string, sets []string) (*serving.Endpoint, error) {
	return specFromFileOrName(env, file, name, sets, spec.ParseEndpoint, spec.ParseEndpointFile,
		func(e *serving.Endpoint, n string) { e.Name = n })
}

func newEndpointUpdateCmd(env *Env) *cobra.Command {
	var file, name, traffic, mirror string
	var sets []string
	var noWait bool
	cmd := &cobra.Command{
		Use:   "update",
		Short: "Change an endpoint's traffic split, mirror traffic, description or tags",
		Example: `  hangar online-endpoint update -n my-endpoint --traffic "blue=90 green=10"
  hangar online-endpoint update -n my-endpoint --mirror-traffic "green=10"
  hangar online-endpoint update -n my-endpoint --set description="serves iris" --set tags.stage=prod
  hangar online-endpoint update -f endpoint.yml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" && name == "" {
				return usageError("give --name (with --traffic, --mirror-traffic or --set) or --file")
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			v, err := updateEndpoint(cmd.Context(), env, c, file, name, traffic, mirror, sets)
			if err != nil {
				return err
			}
			return env.printData(v, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "Updated online endpoint %s: traffic %s; mirror traffic %s\n", v.Name,
					formatTraffic(v.Traffic), formatTraffic(v.MirrorTraffic))
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "online endpoint YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "endpoint name")
	cmd.Flags().StringVar(&traffic, "traffic", "", `traffic split, e.g. "blue=90 green=10" (sums to 100)`)
	cmd.Flags().StringVar(&mirror, "mirror-traffic", "", `copy this share of requests to a deployment, e.g. "green=10" (responses dropped); "green=0" stops it`)
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field of the file, or of the stored endpoint without one: --set key.path=value (repeatable)")
	addNoWaitFlag(cmd, &noWait)
	return cmd
}

// updateEndpoint sends an endpoint update: the file's endpoint, the stored one with --set, or
// the traffic flags alone.
func updateEndpoint(ctx context.Context, env *Env, c *api.Client, file, name, traffic, mirror string, sets []string) (*api.EndpointView, error) {
	var e *serving.Endpoint
	switch {
	case file != "":
		var warnings []string
		var err error
		if e, warnings, err = spec.ParseEndpointFile(file, sets); err != nil {
			return nil, specError(err)
		}
		env.warn(warnings)
		if name != "" {
			e.Name = name
		}
	case len(sets) > 0:
		v, err := c.Endpoints.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		e = &v.Endpoint
		if err := applyStoredSets(e, sets, onlineEndpointKind); err != nil {
			return nil, err
		}
	default:
		if traffic == "" && mirror == "" {
			return nil, usageError("nothing to change: give --traffic, --mirror-traffic, --set or --file")
		}
		var u api.TrafficUpdate
		var err error
		if u.Traffic, err = parseTrafficFlag("--traffic", traffic); err != nil {
			return nil, err
		}
		if u.MirrorTraffic, err = parseTrafficFlag("--mirror-traffic", mirror); err != nil {
			return nil, err
		}
		return c.Endpoints.SetTraffic(ctx, name, u)
	}
	if err := applyTrafficFlags(e, traffic, mirror); err != nil {
		return nil, err
	}
	v, err := c.Endpoints.Update(ctx, *e)
	if err != nil {
		return nil, fileError(file, err)
	}
	return v, nil
}

// parseTrafficFlag parses a --traffic value; "" is nil (unchanged).
func parseTrafficFlag(flag, v string) (map[string]int, error) {
	if v == "" {
		return nil, nil
	}
	t, err := serving.ParseTraffic(v)
	if err != nil {
		return nil, usageError("%s: %v", flag, err)
	}
	return t, nil
}

func applyTrafficFlags(e *serving.Endpoint, traffic, mirror string) error {
	t, err := parseTrafficFlag("--traffic", traffic)
	if err != nil {
		return err
	}
	m, err := parseTrafficFlag("--mirror-traffic", mirror)
	if err != nil {
		return err
	}
	if t != nil {
		e.Traffic = t
	}
	if m != nil {
		e.MirrorTraffic = m
	}
	return nil
}

func formatTraffic(t map[string]int) string {
	if len(t) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range t {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func newEndpointShowCmd(env *Env) *cobra.Command {
	var name string
	var deps []api.DeploymentView // printed after the endpoint, not with -o
	cmd := leaf[*api.EndpointView]{
		Use:     "show",
		Short:   "Show an endpoint: its scoring URI, auth mode, traffic and deployments",
		Example: "  hangar online-endpoint show -n my-endpoint\n  hangar online-endpoint show -n my-endpoint -o json",
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.EndpointView, error) {
			return withDeployments(ctx, name, c.Endpoints.Get, c.Deployments.List, &deps)
		},
		human: func(w io.Writer, v *api.EndpointView) error {
			fmt.Fprintf(w, "Name:            %s\nScoring URI:     %s\nAuth mode:       %s\nTraffic:         %s\nMirror traffic:  %s\n",
				v.Name, v.ScoringURI, v.AuthMode, formatTraffic(v.Traffic), formatTraffic(v.MirrorTraffic))
			if v.Description != "" {
				fmt.Fprintf(w, "Description:     %s\n", v.Description)
			}
			fmt.Fprintln(w, "Deployments:")
			return printDeployments(w, deps)
		},
	}.cmd(env)
	addNameTarget(cmd, &name, "endpoint name")
	return cmd
}

// withDeployments is what an endpoint's show asks, online or batch: the endpoint, then its
// deployments (into deps: printed after it, not with -o).
func withDeployments[E, D any](ctx context.Context, name string, get func(context.Context, string) (E, error),
	list func(context.Context, string) ([]D, error), deps *[]D) (E, error) {
	e, err := get(ctx, name)
	if err == nil {
		*deps, err = list(ctx, name)
	}
	return e, err
}

func printDeployments(w io.Writer, deps []api.DeploymentView) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  DEPLOYMENT\tSTATE\tREPLICAS READY\tCOMPUTE\tREASON")
	for _, d := range deps {
		ready := 0
		for _, r := range d.Replicas {
			if r.Address != "" && r.Status == "Running" {
				ready++
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d/%d\t%s\t%s\n", d.Name, d.ProvisioningState, ready, len(d.Replicas), d.Compute, d.Reason)
	}
	return tw.Flush()
}

func newEndpointListCmd(env *Env) *cobra.Command {
	return leaf[[]api.EndpointView]{
		Use:     "list",
		Short:   "List the online endpoints",
		Example: "  hangar online-endpoint list\n  hangar online-endpoint list -o json",
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]api.EndpointView, error) {
			return c.Endpoints.List(ctx)
		},
		human: func(w io.Writer, eps []api.EndpointView) error {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tAUTH\tTRAFFIC\tSCORING URI")
			for _, e := range eps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.AuthMode, formatTraffic(e.Traffic), e.ScoringURI)
			}
			return tw.Flush()
		},
	}.cmd(env)
}

func newEndpointDeleteCmd(env *Env) *cobra.Command {
	return newServingDeleteCmd(env, servingDelete{
		short:   "Delete an endpoint and its deployments (their replicas stop)",
		example: "  hangar online-endpoint delete -n my-endpoint --yes",
		what:    "online endpoint", also: " and all its deployments", nameHelp: "endpoint name",
		del: func(ctx context.Context, c *api.Client, name, _ string) error { return c.Endpoints.Delete(ctx, name) },
	})
}

func newEndpointCredentialsCmd(env *Env) *cobra.Command {
	var name string
	cmd := leaf[*api.EndpointKeys]{
		Use:     "get-credentials",
		Short:   "Print an endpoint's keys (auth_mode key) or a fresh one-hour token (aml_token)",
		Example: "  hangar online-endpoint get-credentials -n my-endpoint\n  hangar online-endpoint get-credentials -n my-endpoint -o json",
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.EndpointKeys, error) {
			return c.Endpoints.Credentials(ctx, name)
		},
		human: func(w io.Writer, k *api.EndpointKeys) error {
			if k.AccessToken != "" {
				_, err := fmt.Fprintf(w, "accessToken:  %s\nexpiryTimeUtc: %s\n", k.AccessToken, k.ExpiryTime.Format(time.RFC3339))
				return err
			}
			_, err := fmt.Fprintf(w, "primaryKey:   %s\nsecondaryKey: %s\n", k.PrimaryKey, k.SecondaryKey)
			return err
		},
	}.cmd(env)
	addNameTarget(cmd, &name, "endpoint name")
	return cmd
}

func newEndpointRegenerateCmd(env *Env) *cobra.Command {
	var name, keyType string
	cmd := &cobra.Command{
		Use:     "regenerate-keys",
		Short:   "Replace an endpoint's primary or secondary key (the other keeps working)",
		Example: "  hangar online-endpoint regenerate-keys -n my-endpoint --key-type secondary",
		Args:    cobra.NoArgs,
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if err := c.Endpoints.RegenerateKey(cmd.Context(), name, keyType); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "Regenerated the %s key of %s (see get-credentials)\n", keyType, name)
			return nil
		}),
	}
	addNameTarget(cmd, &name, "endpoint name")
	cmd.Flags().StringVar(&keyType, "key-type", "primary", "primary or secondary")
	return cmd
}

func newEndpointInvokeCmd(env *Env) *cobra.Command {
	var name, requestFile, deployment string
	cmd := &cobra.Command{
		Use:   "invoke",
		Short: "Send a request to an endpoint (with its key or a fresh token) and print the answer",
		Example: `  hangar online-endpoint invoke -n my-endpoint --request-file sample-request.json
  hangar online-endpoint invoke -n my-endpoint --request-file sample-request.json --deployment-name green`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := os.ReadFile(requestFile)
			if err != nil {
				return usageError("--request-file: %v", err)
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			v, err := c.Endpoints.Get(cmd.Context(), name)
			if err != nil {
				return err
			}
			k, err := c.Endpoints.Credentials(cmd.Context(), name)
			if err != nil {
				return err
			}
			bearer := k.PrimaryKey
			if k.AccessToken != "" {
				bearer = k.AccessToken
			}
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, v.ScoringURI, bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+bearer)
			if deployment != "" {
				req.Header.Set("azureml-model-deployment", deployment)
			}
			resp, err := c.HTTPClient().Do(req) // the workspace's certificate, as the client verifies it
			if err != nil {
				return fmt.Errorf("invoke %s: %w", name, err)
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
			if err != nil {
				return fmt.Errorf("invoke %s: read the answer: %w", name, err)
			}
			if resp.StatusCode/100 != 2 {
				return fmt.Errorf("invoke %s: %s (deployment %q): %s", name, resp.Status, resp.Header.Get("azureml-model-deployment"),
					strings.TrimSpace(string(out)))
			}
			_, err = env.Stdout.Write(append(bytes.TrimRight(out, "\n"), '\n'))
			return err
		},
	}
	addNameTarget(cmd, &name, "endpoint name")
	cmd.Flags().StringVarP(&requestFile, "request-file", "r", "", "file whose content is the request body (JSON)")
	cmd.Flags().StringVarP(&deployment, "deployment-name", "d", "", "send it to this deployment, whatever the traffic split")
	_ = cmd.MarkFlagRequired("request-file")
	return cmd
}

// warn prints a file's warnings.
func (e *Env) warn(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
}
