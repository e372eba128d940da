package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
)

// Hooks is what the webhooks' verbs ask of the store.
type Hooks interface {
	CreateWebhook(ctx context.Context, w store.Webhook) error
	Webhook(ctx context.Context, id string) (*store.Webhook, error)
	ListWebhooks(ctx context.Context, offset, limit int) ([]store.Webhook, bool, error)
	UpdateWebhook(ctx context.Context, id string, edit func(w *store.Webhook) error) (*store.Webhook, error)
	DeleteWebhook(ctx context.Context, id string) error
}

// Sealer seals and opens secrets at rest (the workspace's, secrets.Keyring).
type Sealer interface {
	Encrypt(plaintext []byte) (string, error)
	Decrypt(ciphertext string) ([]byte, error)
}

// Service is the webhooks' verbs: create, read, update, delete and test, with their checks;
// secrets sealed before they are stored and never given back.
type Service struct {
	Store  Hooks
	Sealer Sealer
	Sender *Sender
	Now    func() time.Time
}

// InvalidError is a request the service refuses (MLflow's INVALID_PARAMETER_VALUE).
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// Statuses of a webhook.
const (
	StatusActive   = store.WebhookActive
	StatusDisabled = "DISABLED"
)

// Spec is a webhook's settings as a create gives them, or an update's changes (an empty field
// changes nothing, as MLflow's update reads it; nil Events too).
type Spec struct {
	Name, Description, URL string
	Events                 []string
	Secret                 string
	Status                 string
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// Create checks and stores a new webhook, ACTIVE unless sp says DISABLED.
func (s *Service) Create(ctx context.Context, sp Spec) (*store.Webhook, error) {
	if strings.TrimSpace(sp.Name) == "" {
		return nil, invalid("Missing value for required parameter 'name'.")
	}
	if sp.URL == "" {
		return nil, invalid("Missing value for required parameter 'url'.")
	}
	if len(sp.Events) == 0 {
		return nil, invalid("Missing value for required parameter 'events'.")
	}
	if sp.Status == "" {
		sp.Status = StatusActive
	}
	now := s.now()
	w := store.Webhook{ID: store.NewUUID(), Created: now, Updated: now}
	if err := s.apply(&w, sp); err != nil {
		return nil, err
	}
	if err := s.Store.CreateWebhook(ctx, w); err != nil {
		return nil, err
	}
	return &w, nil
}

// apply sets what sp gives on w, checked, its secret sealed.
func (s *Service) apply(w *store.Webhook, sp Spec) error {
	if sp.Name != "" {
		w.Name = sp.Name
	}
	if sp.Description != "" {
		w.Description = sp.Description
	}
	if sp.URL != "" {
		if err := CheckURL(sp.URL); err != nil {
			return invalid("%s", err.Error())
		}
		w.URL = sp.URL
	}
	if sp.Events != nil {
		if len(sp.Events) == 0 {
			return invalid("Webhook events cannot be empty")
		}
		for _, e := range sp.Events {
			if !Known(e) {
				return invalid("Invalid event '%s': Hangar's webhooks take %s", e, strings.Join(Events, ", "))
			}
		}
		w.Events = slices.Compact(slices.Clone(sp.Events))
	}
	switch sp.Status {
	case "":
	case StatusActive, StatusDisabled:
		w.Status = sp.Status
	default:
		return invalid("Invalid webhook status '%s': ACTIVE or DISABLED", sp.Status)
	}
	if sp.Secret != "" {
		if s.Sealer == nil {
			return errors.New("this server has no key to seal a webhook's secret with")
		}
		sealed, err := s.Sealer.Encrypt([]byte(sp.Secret))
		if err != nil {
			return fmt.Errorf("seal the webhook's secret: %w", err)
		}
		w.Secret = sealed
	}
	return nil
}

// Get reads one webhook.
func (s *Service) Get(ctx context.Context, id string) (*store.Webhook, error) {
	return s.Store.Webhook(ctx, id)
}

// List reads up to limit webhooks from offset, and whether more follow.
func (s *Service) List(ctx context.Context, offset, limit int) ([]store.Webhook, bool, error) {
	return s.Store.ListWebhooks(ctx, offset, limit)
}

// Update changes what sp gives of a webhook.
func (s *Service) Update(ctx context.Context, id string, sp Spec) (*store.Webhook, error) {
	return s.Store.UpdateWebhook(ctx, id, func(w *store.Webhook) error {
		if err := s.apply(w, sp); err != nil {
			return err
		}
		w.Updated = s.now()
		return nil
	})
}

// Delete removes a webhook and its pending deliveries.
func (s *Service) Delete(ctx context.Context, id string) error {
	if _, err := s.Store.Webhook(ctx, id); err != nil {
		return err
	}
	return s.Store.DeleteWebhook(ctx, id)
}

// TestResult is what a test delivery got (MLflow's WebhookTestResult).
type TestResult struct {
	Success        bool
	ResponseStatus int
	ResponseBody   string
	Error          string
}

// Test POSTs MLflow's example payload of event ("": the webhook's first) to the webhook now,
// signed as a delivery is, once, whatever its status, and says what the receiver answered
// (success: below 400, as MLflow's test says). Nothing is recorded.
func (s *Service) Test(ctx context.Context, id, event string) (*TestResult, error) {
	w, err := s.Store.Webhook(ctx, id)
	if err != nil {
		return nil, err
	}
	if event == "" && len(w.Events) > 0 {
		event = w.Events[0]
	}
	if !Known(event) {
		return nil, invalid("Invalid event '%s': Hangar's webhooks take %s", event, strings.Join(Events, ", "))
	}
	var secret string
	if w.Secret != "" {
		b, err := s.Sealer.Decrypt(w.Secret)
		if err != nil {
			return nil, fmt.Errorf("unseal webhook %s's secret: %w", id, err)
		}
		secret = string(b)
	}
	now := s.now()
	body, err := Body(event, Example(event), now)
	if err != nil {
		return nil, err
	}
	resp, err := s.Sender.Send(ctx, Request{URL: w.URL, Secret: secret, DeliveryID: store.NewUUID(), Body: body, At: now})
	if err != nil {
		return &TestResult{Error: "Failed to test webhook: " + err.Error()}, nil
	}
	return &TestResult{Success: resp.Status < 400, ResponseStatus: resp.Status, ResponseBody: resp.Body}, nil
}
