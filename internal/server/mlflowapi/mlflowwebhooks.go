package mlflowapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
	"github.com/hangar-ml/hangar/internal/webhook"
)

// MLflow 3.3's registry webhooks (mlflow/protos/webhooks.proto; docs/mlflow.md "Webhooks"):
// create, list, get, update, delete and test, under /api/2.0/mlflow/webhooks. Owners only:
// the server sends requests to the URL a webhook names (docs/security.md "Outbound
// requests"). A webhook's secret is sealed at rest and never answered.

// Webhooks are the webhooks' verbs (webhook.Service).
type Webhooks interface {
	Create(ctx context.Context, sp webhook.Spec) (*store.Webhook, error)
	Get(ctx context.Context, id string) (*store.Webhook, error)
	List(ctx context.Context, offset, limit int) ([]store.Webhook, bool, error)
	Update(ctx context.Context, id string, sp webhook.Spec) (*store.Webhook, error)
	Delete(ctx context.Context, id string) error
	Test(ctx context.Context, id, event string) (*webhook.TestResult, error)
}

// MLflow's list limits (ListWebhooks: max_results defaults to 100).
const (
	defaultWebhooks = 100
	maxWebhooks     = 1000
)

func (s *registry) webhookRoutes(mux Mux) {
	p := Prefix + "webhooks"
	mux.Handle("POST "+p, ownerAccess.audited("webhook.create"), mlflowHandler(s.api, s.createWebhook))
	mux.Handle("GET "+p, ownerAccess, mlflowHandler(s.api, s.listWebhooks))
	mux.Handle("GET "+p+"/{id}", ownerAccess, mlflowHandler(s.api, s.getWebhook))
	mux.Handle("PATCH "+p+"/{id}", ownerAccess.audited("webhook.update"), mlflowHandler(s.api, s.updateWebhook))
	mux.Handle("DELETE "+p+"/{id}", ownerAccess.audited("webhook.delete"), mlflowHandler(s.api, s.deleteWebhook))
	mux.Handle("POST "+p+"/{id}/test", ownerAccess, mlflowHandler(s.api, s.testWebhook))
}

// eventJSON is MLflow's WebhookEvent: the proto enums' names (or numbers, read).
type eventJSON struct {
	Entity json.RawMessage `json:"entity"`
	Action json.RawMessage `json:"action"`
}

type webhookJSON struct {
	ID                   string      `json:"webhook_id"`
	Name                 string      `json:"name"`
	Description          string      `json:"description,omitempty"`
	URL                  string      `json:"url"`
	Events               []eventJSON `json:"events"`
	Status               string      `json:"status"`
	CreationTimestamp    int64       `json:"creation_timestamp"`
	LastUpdatedTimestamp int64       `json:"last_updated_timestamp"`
}

// toWebhookJSON is a webhook as MLflow answers it: never its secret.
func toWebhookJSON(w *store.Webhook) webhookJSON {
	out := webhookJSON{ID: w.ID, Name: w.Name, Description: w.Description, URL: w.URL, Status: w.Status,
		CreationTimestamp: w.Created.UnixMilli(), LastUpdatedTimestamp: w.Updated.UnixMilli(), Events: []eventJSON{}}
	for _, e := range w.Events {
		en, ac := webhook.Enum(e)
		out.Events = append(out.Events, eventJSON{Entity: quote(en), Action: quote(ac)})
	}
	return out
}

func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// webhookIn is CreateWebhook's and UpdateWebhook's body.
type webhookIn struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	URL         string          `json:"url"`
	Events      []eventJSON     `json:"events"`
	Secret      string          `json:"secret"`
	Status      json.RawMessage `json:"status"`
}

// spec reads the body as the service's Spec: events named as MLflow names them, status by name
// or number.
func (in *webhookIn) spec() (webhook.Spec, error) {
	sp := webhook.Spec{Name: in.Name, Description: in.Description, URL: in.URL, Secret: in.Secret}
	for _, e := range in.Events {
		ev, err := webhook.EventOf(e.Entity, e.Action)
		if err != nil {
			return sp, mlflowInvalid("Invalid webhook event: " + err.Error())
		}
		sp.Events = append(sp.Events, ev)
	}
	if len(in.Status) > 0 && string(in.Status) != "null" {
		var n int
		var name string
		switch {
		case json.Unmarshal(in.Status, &n) == nil && n == 1:
			sp.Status = webhook.StatusActive
		case json.Unmarshal(in.Status, &n) == nil && n == 2:
			sp.Status = webhook.StatusDisabled
		case json.Unmarshal(in.Status, &name) == nil:
			sp.Status = name
		default:
			return sp, mlflowInvalid("Invalid webhook status " + string(in.Status) + ": ACTIVE or DISABLED")
		}
	}
	return sp, nil
}

func webhookErr(err error) error {
	var ie *webhook.InvalidError
	if errors.As(err, &ie) {
		return mlflowInvalid(ie.Msg)
	}
	return err
}

func (s *registry) createWebhook(r *http.Request, in *webhookIn) (any, error) {
	sp, err := in.spec()
	if err != nil {
		return nil, err
	}
	w, err := s.cfg.Webhooks.Create(r.Context(), sp)
	if err != nil {
		return nil, webhookErr(err)
	}
	return map[string]any{"webhook": toWebhookJSON(w)}, nil
}

type listWebhooksIn struct {
	MaxResults json.Number `json:"max_results"`
	PageToken  string      `json:"page_token"`
}

func (s *registry) listWebhooks(r *http.Request, in *listWebhooksIn) (any, error) {
	limit := defaultWebhooks
	if in.MaxResults != "" {
		n, err := in.MaxResults.Int64()
		if err != nil || n < 1 || n > maxWebhooks {
			return nil, mlflowInvalid("Invalid value for max_results: it must be between 1 and 1000")
		}
		limit = int(n)
	}
	offset, err := tracking.ParseToken(in.PageToken)
	if err != nil {
		return nil, err
	}
	ws, more, err := s.cfg.Webhooks.List(r.Context(), offset, limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Webhooks []webhookJSON `json:"webhooks"`
		Next     string        `json:"next_page_token,omitempty"`
	}{Webhooks: []webhookJSON{}}
	for i := range ws {
		out.Webhooks = append(out.Webhooks, toWebhookJSON(&ws[i]))
	}
	if more {
		out.Next = tracking.PageToken(offset + limit)
	}
	return out, nil
}

type noBody struct{}

func (s *registry) getWebhook(r *http.Request, _ *noBody) (any, error) {
	w, err := s.cfg.Webhooks.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return map[string]any{"webhook": toWebhookJSON(w)}, nil
}

func (s *registry) updateWebhook(r *http.Request, in *webhookIn) (any, error) {
	sp, err := in.spec()
	if err != nil {
		return nil, err
	}
	if in.Events != nil && len(in.Events) == 0 {
		sp.Events = nil // MLflow's update reads an empty list as no change
	}
	w, err := s.cfg.Webhooks.Update(r.Context(), r.PathValue("id"), sp)
	if err != nil {
		return nil, webhookErr(err)
	}
	return map[string]any{"webhook": toWebhookJSON(w)}, nil
}

func (s *registry) deleteWebhook(r *http.Request, _ *noBody) (any, error) {
	if err := s.cfg.Webhooks.Delete(r.Context(), r.PathValue("id")); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

type testWebhookIn struct {
	Event *eventJSON `json:"event"`
}

type testResultJSON struct {
	Success        bool   `json:"success"`
	ResponseStatus int    `json:"response_status,omitempty"`
	ResponseBody   string `json:"response_body,omitempty"`
	ErrorMessage   string `json:"error_message,omitempty"`
}

func (s *registry) testWebhook(r *http.Request, in *testWebhookIn) (any, error) {
	var event string
	if in.Event != nil {
		ev, err := webhook.EventOf(in.Event.Entity, in.Event.Action)
		if err != nil {
			return nil, mlflowInvalid("Invalid webhook event: " + err.Error())
		}
		event = ev
	}
	res, err := s.cfg.Webhooks.Test(r.Context(), r.PathValue("id"), event)
	if err != nil {
		return nil, webhookErr(err)
	}
	return map[string]any{"result": testResultJSON{Success: res.Success, ResponseStatus: res.ResponseStatus,
		ResponseBody: res.ResponseBody, ErrorMessage: res.Error}}, nil
}
