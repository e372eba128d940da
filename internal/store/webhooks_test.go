package store

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/model"
)

func putWebhook(t *testing.T, s *Store, id, status string, events ...string) {
	t.Helper()
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	if err := s.Webhooks.CreateWebhook(t.Context(), Webhook{ID: id, Name: "n-" + id, URL: "https://example.com/" + id, Events: events,
		Secret: "sealed-" + id, Status: status, Created: at, Updated: at}); err != nil {
		t.Fatal(err)
	}
}

type sent struct{ Hook, Event, Payload string }

func deliveries(t *testing.T, s *Store) []sent {
	t.Helper()
	ds, err := s.Webhooks.Deliveries(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []sent
	for _, d := range ds {
		out = append(out, sent{d.WebhookID, d.Event, string(d.Payload)})
	}
	return out
}

// Each registry write appends MLflow's event with its payload, and a pending delivery to each
// active webhook subscribed to it; a disabled or unsubscribed webhook gets none, and writes
// MLflow has no event for (a stage, a description) append nothing.
func TestRegistryWritesAppendTheirEvents(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	putWebhook(t, s, "all", WebhookActive, EventRegisteredModelCreated, EventModelVersionCreated, EventModelVersionTagSet,
		EventModelVersionTagDeleted, EventModelVersionAliasCreated, EventModelVersionAliasDeleted)
	putWebhook(t, s, "aliases", WebhookActive, EventModelVersionAliasCreated)
	putWebhook(t, s, "off", "DISABLED", EventRegisteredModelCreated, EventModelVersionCreated)
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

	if err := s.Assets.CreateRegisteredModel(ctx, RegisteredModel{Name: "iris", Description: "flowers", Created: at}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.CreateModel(ctx, model.Version{Name: "iris", Manifest: "m", Source: "azureml://jobs/run-1/outputs/artifacts/paths/model",
		Meta: asset.Meta{Tags: map[string]string{"a": "1"}}, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	// A version MLflow cannot name (not an integer) is no event.
	if _, err := s.Assets.CreateModel(ctx, model.Version{Name: "iris", Version: "0.0.1", Manifest: "m", Source: model.SourceLocal, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.UpdateModelMeta(ctx, "iris", "1", func(m *asset.Meta) {
		m.Tags = map[string]string{"a": "1", "b": "2"}
		m.Description = "changed"
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.UpdateModelMeta(ctx, "iris", "1", func(m *asset.Meta) { delete(m.Tags, "a") }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.TransitionModelStage(ctx, "iris", "1", model.StageStaging, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.SetModelAlias(ctx, ModelAlias{Name: "iris", Alias: "champion", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second delete finds nothing: no event
		if err := s.Assets.DeleteModelAlias(ctx, "iris", "champion"); err != nil {
			t.Fatal(err)
		}
	}
	want := []sent{
		{"all", EventRegisteredModelCreated, `{"name":"iris","tags":{},"description":"flowers"}`},
		{"all", EventModelVersionCreated, `{"name":"iris","version":"1","source":"azureml://jobs/run-1/outputs/artifacts/paths/model","run_id":"run-1","tags":{"a":"1"},"description":null}`},
		{"all", EventModelVersionTagSet, `{"name":"iris","version":"1","key":"b","value":"2"}`},
		{"all", EventModelVersionTagDeleted, `{"name":"iris","version":"1","key":"a"}`},
		{"aliases", EventModelVersionAliasCreated, `{"name":"iris","alias":"champion","version":"1"}`},
		{"all", EventModelVersionAliasCreated, `{"name":"iris","alias":"champion","version":"1"}`},
		{"all", EventModelVersionAliasDeleted, `{"name":"iris","alias":"champion"}`},
	}
	got := deliveries(t, s)
	// Deliveries of one event come in id order (random): compare each event's set.
	if len(got) == 7 && got[4].Hook == "all" {
		got[4], got[5] = got[5], got[4]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	events, err := s.Webhooks.RegistryEvents(ctx, 0)
	if err != nil || len(events) != 6 {
		t.Errorf("events = %d, %v; want 6 (one per write that has one)", len(events), err)
	}
}

// A write that fails appends nothing: the event and the write are one transaction.
func TestAFailedWriteAppendsNoEvent(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	putWebhook(t, s, "all", WebhookActive, EventRegisteredModelCreated)
	at := time.Now()
	if err := s.Assets.CreateRegisteredModel(ctx, RegisteredModel{Name: "iris", Created: at}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.CreateRegisteredModel(ctx, RegisteredModel{Name: "iris", Created: at}, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("second create = %v, want ErrExists", err)
	}
	if got := deliveries(t, s); len(got) != 1 {
		t.Errorf("deliveries = %+v, want the first create's only", got)
	}
}

// Due deliveries: pending, due, to an active webhook, in event order; an attempt is recorded
// once, and a delivery that ended is not due again; a webhook's delete takes its deliveries.
func TestWebhookDeliveriesAreDueUntilTheyEnd(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	putWebhook(t, s, "h", WebhookActive, EventModelVersionAliasCreated)
	addVersions(t, s, 1, "m") // an alias names a version that is there
	for _, alias := range []string{"a", "b"} {
		if err := s.Assets.SetModelAlias(ctx, ModelAlias{Name: "m", Alias: alias, Version: "1"}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Add(time.Second)
	due, err := s.Webhooks.DueDeliveries(ctx, now, 10)
	if err != nil || len(due) != 2 || due[0].URL != "https://example.com/h" || due[0].Secret != "sealed-h" ||
		!json.Valid(due[0].Payload) || due[0].EventAt.IsZero() {
		t.Fatalf("due = %+v, %v", due, err)
	}
	if err := s.Webhooks.RecordAttempt(ctx, due[0].ID, Attempt{State: DeliveryPending, NextAt: now.Add(time.Minute), Status: 503, Error: "503", At: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.Webhooks.RecordAttempt(ctx, due[1].ID, Attempt{State: DeliveryDelivered, Status: 200, At: now}); err != nil {
		t.Fatal(err)
	}
	if again, err := s.Webhooks.DueDeliveries(ctx, now, 10); err != nil || len(again) != 0 {
		t.Errorf("due right after = %+v, %v; want none", again, err)
	}
	later, err := s.Webhooks.DueDeliveries(ctx, now.Add(time.Minute), 10)
	if err != nil || len(later) != 1 || later[0].ID != due[0].ID || later[0].Attempts != 1 || later[0].LastStatus != 503 {
		t.Errorf("due a minute later = %+v, %v; want the retried one, 1 attempt", later, err)
	}
	// A disabled webhook's deliveries wait.
	if _, err := s.Webhooks.UpdateWebhook(ctx, "h", func(w *Webhook) error { w.Status = "DISABLED"; return nil }); err != nil {
		t.Fatal(err)
	}
	if off, err := s.Webhooks.DueDeliveries(ctx, now.Add(time.Hour), 10); err != nil || len(off) != 0 {
		t.Errorf("due while disabled = %+v, %v", off, err)
	}
	if n, err := s.Webhooks.PruneDeliveries(ctx, now.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("prune = %d, %v; want the delivered one", n, err)
	}
	if err := s.Webhooks.DeleteWebhook(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	if left := deliveries(t, s); len(left) != 0 {
		t.Errorf("deliveries after the delete = %+v", left)
	}
	if err := s.Webhooks.DeleteWebhook(ctx, "h"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete = %v, want ErrNotFound", err)
	}
}

// Webhooks are listed oldest first, in pages; an update keeps what it does not change; a
// missing one is ErrNotFound.
func TestWebhooksCRUD(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		putWebhook(t, s, id, WebhookActive, EventModelVersionCreated)
	}
	page, more, err := s.Webhooks.ListWebhooks(ctx, 0, 2)
	if err != nil || len(page) != 2 || !more || page[0].ID != "a" {
		t.Errorf("first page = %+v, %v, %v", page, more, err)
	}
	page, more, err = s.Webhooks.ListWebhooks(ctx, 2, 2)
	if err != nil || len(page) != 1 || more || page[0].ID != "c" {
		t.Errorf("second page = %+v, %v, %v", page, more, err)
	}
	up, err := s.Webhooks.UpdateWebhook(ctx, "b", func(w *Webhook) error { w.Name = "renamed"; return nil })
	if err != nil || up.Name != "renamed" || up.URL != "https://example.com/b" {
		t.Errorf("update = %+v, %v", up, err)
	}
	got, err := s.Webhooks.Webhook(ctx, "b")
	if err != nil || got.Name != "renamed" || got.Secret != "sealed-b" || len(got.Events) != 1 {
		t.Errorf("get = %+v, %v", got, err)
	}
	if _, err := s.Webhooks.Webhook(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get missing = %v", err)
	}
	if _, err := s.Webhooks.UpdateWebhook(ctx, "nope", func(*Webhook) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("update missing = %v", err)
	}
}

// A key rotation reseals webhooks' secrets with the workspace's other sealed values; a webhook
// without a secret is left as it is.
func TestResealTakesWebhooksSecrets(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	putWebhook(t, s, "h", WebhookActive, EventModelVersionCreated)
	at := time.Now()
	if err := s.Webhooks.CreateWebhook(ctx, Webhook{ID: "bare", Name: "bare", URL: "https://example.com", Events: []string{EventModelVersionCreated},
		Status: WebhookActive, Created: at, Updated: at}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Assets.Reseal(ctx, Resealer{
		Value:   func(v string) (string, bool, error) { return "resealed(" + v + ")", true, nil },
		Compute: func(compute.Target) ([]byte, bool, error) { return nil, false, nil },
	})
	if err != nil || n != 1 {
		t.Fatalf("reseal = %d, %v; want the one secret", n, err)
	}
	if h, err := s.Webhooks.Webhook(ctx, "h"); err != nil || h.Secret != "resealed(sealed-h)" {
		t.Errorf("secret after the reseal = %+v, %v", h, err)
	}
	if h, err := s.Webhooks.Webhook(ctx, "bare"); err != nil || h.Secret != "" {
		t.Errorf("bare webhook after the reseal = %+v, %v", h, err)
	}
}
