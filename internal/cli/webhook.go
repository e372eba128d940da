package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newWebhookCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Manage MLflow's registry webhooks (owners)",
		Long: `MLflow's registry webhooks: the server POSTs the model registry's events (a model or version
registered, a version's tag set or deleted, an alias set or deleted) to a URL, signed with the
webhook's secret as MLflow signs them, retried until the receiver takes them, across restarts.
The same webhooks MLflow's client manages (MlflowClient().create_webhook). Owners only: the server
sends requests where a webhook says. See docs/mlflow.md.`,
		Example: `  printf %s "$SECRET" | hangar webhook create --name ci --url https://ci.example.com/hook \
      --event model_version.created --event model_version_alias.created
  hangar webhook list
  hangar webhook test <id> --event model_version_alias.created
  hangar webhook update <id> --disable
  hangar webhook delete <id> --yes`,
	}
	cmd.AddCommand(newWebhookCreateCmd(env), newWebhookUpdateCmd(env), newWebhookListCmd(env), newWebhookShowCmd(env),
		newWebhookTestCmd(env), newWebhookDeleteCmd(env))
	return groupCmd(cmd)
}

// webhookFlags are create's and update's.
type webhookFlags struct {
	name, description, url string
	events                 []string
	secret                 bool
	secretFile             string
	disable, enable        bool
}

func (f *webhookFlags) add(cmd *cobra.Command, create bool) {
	cmd.Flags().StringVar(&f.name, "name", "", "the webhook's name")
	cmd.Flags().StringVar(&f.description, "description", "", "what it is for")
	cmd.Flags().StringVar(&f.url, "url", "", "where to POST the events (http or https)")
	cmd.Flags().StringArrayVar(&f.events, "event", nil, "an event to send (repeatable): "+strings.Join(webhookEventNames, ", "))
	cmd.Flags().BoolVar(&f.secret, "secret", false, "read a signing secret from stdin (asked for without echo on a terminal)")
	cmd.Flags().StringVar(&f.secretFile, "secret-from-file", "", "read the signing secret from this file, as it is")
	cmd.Flags().BoolVar(&f.disable, "disable", false, "send nothing until enabled")
	if !create {
		cmd.Flags().BoolVar(&f.enable, "enable", false, "send events again")
	}
}

var webhookEventNames = []string{"registered_model.created", "model_version.created", "model_version_tag.set",
	"model_version_tag.deleted", "model_version_alias.created", "model_version_alias.deleted"}

func (f *webhookFlags) request(env *Env) (api.CreateWebhookRequest, error) {
	req := api.CreateWebhookRequest{Name: f.name, Description: f.description, URL: f.url}
	for _, e := range f.events {
		ev, err := api.ParseWebhookEvent(e)
		if err != nil {
			return req, usageError("--event %v", err)
		}
		req.Events = append(req.Events, ev)
	}
	switch {
	case f.disable && f.enable:
		return req, usageError("--enable and --disable contradict each other")
	case f.disable:
		req.Status = "DISABLED"
	case f.enable:
		req.Status = "ACTIVE"
	}
	if f.secret || f.secretFile != "" {
		v, err := env.secretValue("webhook-secret", f.secretFile)
		if err != nil {
			return req, err
		}
		req.Secret = v
	}
	return req, nil
}

func newWebhookCreateCmd(env *Env) *cobra.Command {
	var f webhookFlags
	cmd := &cobra.Command{
		Use:   "create --name NAME --url URL --event EVENT...",
		Short: "Create a webhook",
		Long: `Create a webhook. With --secret the signing secret is read from stdin (never a flag's value, which
shell histories and process lists keep); it is sealed at rest and never shown again.`,
		Example: "  printf %s \"$SECRET\" | hangar webhook create --name ci --url https://ci.example.com/hook --event model_version.created --secret",
		Args:    cobra.NoArgs,
		RunE: env.withClient(func(cmd *cobra.Command, _ []string, c *api.Client) error {
			req, err := f.request(env)
			if err != nil {
				return err
			}
			w, err := c.Webhooks.Create(cmd.Context(), req)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Created webhook %s (%s)\n", w.Name, w.ID)
			return env.printData(w, func(out io.Writer) error { return webhookText(out, *w) })
		}),
	}
	f.add(cmd, true)
	return cmd
}

func newWebhookUpdateCmd(env *Env) *cobra.Command {
	var f webhookFlags
	cmd := &cobra.Command{
		Use:     "update ID",
		Short:   "Change a webhook (what is not given stays)",
		Example: "  hangar webhook update 0b8e... --disable\n  hangar webhook update 0b8e... --event model_version.created --event model_version_tag.set",
		Args:    cobra.ExactArgs(1),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			req, err := f.request(env)
			if err != nil {
				return err
			}
			w, err := c.Webhooks.Update(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			return env.printData(w, func(out io.Writer) error { return webhookText(out, *w) })
		}),
	}
	f.add(cmd, false)
	return cmd
}

func newWebhookListCmd(env *Env) *cobra.Command {
	return listCmd(env, "List the webhooks (never their secrets)", "  hangar webhook list\n  hangar webhook list -o json",
		func(ctx context.Context, c *api.Client) ([]api.Webhook, error) { return c.Webhooks.List(ctx) },
		[]string{"ID", "NAME", "STATUS", "URL", "EVENTS"},
		func(w api.Webhook) []string { return []string{w.ID, w.Name, w.Status, w.URL, webhookEvents(w)} })
}

func newWebhookShowCmd(env *Env) *cobra.Command {
	return leaf[*api.Webhook]{
		Use: "show ID", Short: "Show a webhook", Example: "  hangar webhook show 0b8e...", Args: cobra.ExactArgs(1),
		ask: func(ctx context.Context, c *api.Client, args []string) (*api.Webhook, error) {
			return c.Webhooks.Get(ctx, args[0])
		},
		human: func(w io.Writer, v *api.Webhook) error { return webhookText(w, *v) },
	}.cmd(env)
}

func newWebhookTestCmd(env *Env) *cobra.Command {
	var event string
	cmd := leaf[*api.WebhookTestResult]{
		Use: "test ID", Short: "Send MLflow's example of an event to a webhook now, and say what it answered",
		Example: "  hangar webhook test 0b8e... --event model_version_alias.created", Args: cobra.ExactArgs(1),
		ask: func(ctx context.Context, c *api.Client, args []string) (*api.WebhookTestResult, error) {
			var ev *api.WebhookEvent
			if event != "" {
				e, err := api.ParseWebhookEvent(event)
				if err != nil {
					return nil, usageError("--event %v", err)
				}
				ev = &e
			}
			return c.Webhooks.Test(ctx, args[0], ev)
		},
		human: func(w io.Writer, r *api.WebhookTestResult) error {
			if r.ErrorMessage != "" {
				_, err := fmt.Fprintf(w, "failed: %s\n", r.ErrorMessage)
				return err
			}
			verdict := "taken"
			if !r.Success {
				verdict = "refused"
			}
			_, err := fmt.Fprintf(w, "%s: the receiver answered %d\n%s\n", verdict, r.ResponseStatus, r.ResponseBody)
			return err
		},
	}.cmd(env)
	cmd.Flags().StringVar(&event, "event", "", "the event to send (default: the webhook's first)")
	return cmd
}

func newWebhookDeleteCmd(env *Env) *cobra.Command {
	return namedDelete{
		use: "delete ID", short: "Delete a webhook and its pending deliveries",
		example: "  hangar webhook delete 0b8e... --yes", question: "Delete webhook %s?", refusal: "delete webhook",
		del: func(ctx context.Context, c *api.Client, id string) error {
			if err := c.Webhooks.Delete(ctx, id); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Deleted webhook %s\n", id)
			return nil
		},
	}.cmd(env)
}

func webhookEvents(w api.Webhook) string {
	var names []string
	for _, e := range w.Events {
		names = append(names, e.String())
	}
	return strings.Join(names, ",")
}

func webhookText(out io.Writer, w api.Webhook) error {
	created, updated := time.UnixMilli(w.CreationTimestamp).UTC(), time.UnixMilli(w.LastUpdatedTimestamp).UTC()
	_, err := fmt.Fprintf(out, "id:          %s\nname:        %s\ndescription: %s\nurl:         %s\nevents:      %s\nstatus:      %s\ncreated:     %s\nupdated:     %s\n",
		w.ID, w.Name, w.Description, w.URL, webhookEvents(w), w.Status, fmtTime(&created), fmtTime(&updated))
	return err
}
