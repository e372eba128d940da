package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// MLflow's registry webhooks, as its REST API under /api/2.0/mlflow/webhooks answers them
// (docs/mlflow.md "Webhooks"): what `hangar webhook` calls.

const webhooksPath = "/api/2.0/mlflow/webhooks"

// WebhookEvent is MLflow's WebhookEvent: the proto enums' names (MODEL_VERSION, CREATED).
type WebhookEvent struct {
	Entity string `json:"entity"`
	Action string `json:"action"`
}

// String is the event as MLflow names it in its docs and payloads: model_version.created.
func (e WebhookEvent) String() string {
	return strings.ToLower(e.Entity) + "." + strings.ToLower(e.Action)
}

// ParseWebhookEvent reads "model_version.created" (any case).
func ParseWebhookEvent(s string) (WebhookEvent, error) {
	e, a, ok := strings.Cut(s, ".")
	if !ok || e == "" || a == "" {
		return WebhookEvent{}, fmt.Errorf("event %q: expected <entity>.<action>, e.g. model_version.created", s)
	}
	return WebhookEvent{Entity: strings.ToUpper(e), Action: strings.ToUpper(a)}, nil
}

// Webhook is one webhook as the API answers it: never its secret.
type Webhook struct {
	ID                   string         `json:"webhook_id"`
	Name                 string         `json:"name"`
	Description          string         `json:"description,omitempty"`
	URL                  string         `json:"url"`
	Events               []WebhookEvent `json:"events"`
	Status               string         `json:"status"`
	CreationTimestamp    int64          `json:"creation_timestamp"`
	LastUpdatedTimestamp int64          `json:"last_updated_timestamp"`
}

// CreateWebhookRequest is MLflow's CreateWebhook (and UpdateWebhook: empty fields stay).
type CreateWebhookRequest struct {
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	URL         string         `json:"url,omitempty"`
	Events      []WebhookEvent `json:"events,omitempty"`
	Secret      string         `json:"secret,omitempty"`
	Status      string         `json:"status,omitempty"`
}

// WebhookTestResult is what a test delivery got.
type WebhookTestResult struct {
	Success        bool   `json:"success"`
	ResponseStatus int    `json:"response_status,omitempty"`
	ResponseBody   string `json:"response_body,omitempty"`
	ErrorMessage   string `json:"error_message,omitempty"`
}

type webhookReply struct {
	Webhook Webhook `json:"webhook"`
}

// Create creates a webhook.
func (c *WebhookClient) Create(ctx context.Context, req CreateWebhookRequest) (*Webhook, error) {
	r, err := call[webhookReply](ctx, c.client, http.MethodPost, webhooksPath, req)
	if err != nil {
		return nil, err
	}
	return &r.Webhook, nil
}

// Update changes what req gives of a webhook.
func (c *WebhookClient) Update(ctx context.Context, id string, req CreateWebhookRequest) (*Webhook, error) {
	r, err := call[webhookReply](ctx, c.client, http.MethodPatch, webhooksPath+"/"+url.PathEscape(id), req)
	if err != nil {
		return nil, err
	}
	return &r.Webhook, nil
}

// Get shows one webhook.
func (c *WebhookClient) Get(ctx context.Context, id string) (*Webhook, error) {
	r, err := call[webhookReply](ctx, c.client, http.MethodGet, webhooksPath+"/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	return &r.Webhook, nil
}

// List lists every webhook, page after page.
func (c *WebhookClient) List(ctx context.Context) ([]Webhook, error) {
	out := []Webhook{}
	token := ""
	for {
		q := url.Values{"max_results": {"1000"}}
		if token != "" {
			q.Set("page_token", token)
		}
		page, err := call[struct {
			Webhooks []Webhook `json:"webhooks"`
			Next     string    `json:"next_page_token"`
		}](ctx, c.client, http.MethodGet, webhooksPath+"?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Webhooks...)
		if page.Next == "" {
			return out, nil
		}
		token = page.Next
	}
}

// Delete deletes a webhook and its pending deliveries.
func (c *WebhookClient) Delete(ctx context.Context, id string) error {
	return c.client.do(ctx, http.MethodDelete, webhooksPath+"/"+url.PathEscape(id), nil, nil)
}

// Test sends MLflow's example payload of event (nil: the webhook's first) to the webhook now.
func (c *WebhookClient) Test(ctx context.Context, id string, event *WebhookEvent) (*WebhookTestResult, error) {
	r, err := call[struct {
		Result WebhookTestResult `json:"result"`
	}](ctx, c.client, http.MethodPost, webhooksPath+"/"+url.PathEscape(id)+"/test", map[string]any{"event": event})
	if err != nil {
		return nil, err
	}
	return &r.Result, nil
}
