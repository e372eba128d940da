package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Webhook is one of MLflow's registry webhooks (migration 0032): where to POST which registry
// events. Secret is sealed by the caller ("" none); the store never sees it in the clear.
type Webhook struct {
	ID          string
	Name        string
	Description string
	URL         string
	Events      []string // MLflow's names: "model_version.created", ...
	Secret      string   // sealed
	Status      string   // ACTIVE or DISABLED
	Created     time.Time
	Updated     time.Time
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// WebhookActive is the status of a webhook that receives events.
const WebhookActive = "ACTIVE"

// Delivery is one event to send to one webhook, with what the webhook loop needs to send it.
type Delivery struct {
	ID        string
	WebhookID string
	URL       string
	Secret    string // the webhook's, sealed
	Event     string
	Payload   json.RawMessage
	EventAt   time.Time
	State     string
	Attempts  int
	NextAt    time.Time
	// LastStatus and LastError are the last attempt's HTTP status (0 none) and error.
	LastStatus int
	LastError  string
}

// Attempt is the outcome of one try of a delivery, as the webhook loop decided it.
type Attempt struct {
	State  string    // DeliveryPending (try again at NextAt), DeliveryDelivered or DeliveryFailed
	NextAt time.Time // when State is pending
	Status int       // the receiver's HTTP status, 0 when it gave none
	Error  string
	At     time.Time
}

// NewUUID is a random (version 4) UUID, as MLflow names webhooks and deliveries.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

const webhookCols = `id, name, description, url, events, secret, status, created_at, updated_at`

func scanWebhook(sc scanner) (Webhook, error) {
	var w Webhook
	var events string
	var created, updated int64
	if err := sc.Scan(&w.ID, &w.Name, &w.Description, &w.URL, &events, &w.Secret, &w.Status, &created, &updated); err != nil {
		return Webhook{}, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return Webhook{}, fmt.Errorf("webhook %s: events: %w", w.ID, err)
	}
	w.Created, w.Updated = fromNanos(created), fromNanos(updated)
	return w, nil
}

// CreateWebhook stores a webhook; its ID is the caller's.
func (s *Webhooks) CreateWebhook(ctx context.Context, w Webhook) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO registry_webhooks (`+webhookCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.Name, w.Description, w.URL, string(events), w.Secret, w.Status, nanos(w.Created), nanos(w.Updated)); err != nil {
		return fmt.Errorf("create webhook %s: %w", w.Name, err)
	}
	return s.sync(ctx)
}

// Webhook reads one webhook; none is ErrNotFound.
func (s *Webhooks) Webhook(ctx context.Context, id string) (*Webhook, error) {
	w, err := scanWebhook(s.db.QueryRowContext(ctx, `SELECT `+webhookCols+` FROM registry_webhooks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("Webhook with ID %s not found.: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read webhook %s: %w", id, err)
	}
	return &w, nil
}

// ListWebhooks lists up to limit webhooks from offset, oldest first, and whether more follow.
func (s *Webhooks) ListWebhooks(ctx context.Context, offset, limit int) ([]Webhook, bool, error) {
	out, err := queryAll(ctx, s.db, scanWebhook, `SELECT `+webhookCols+` FROM registry_webhooks
		ORDER BY created_at, id LIMIT ? OFFSET ?`, limit+1, offset)
	if err != nil {
		return nil, false, fmt.Errorf("list webhooks: %w", err)
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// UpdateWebhook changes a webhook in place (edit may refuse with an error) and returns it as
// stored.
func (s *Webhooks) UpdateWebhook(ctx context.Context, id string, edit func(w *Webhook) error) (*Webhook, error) {
	var out Webhook
	err := s.withTx(ctx, "update webhook "+id, func(tx *sql.Tx) error {
		w, err := scanWebhook(tx.QueryRowContext(ctx, `SELECT `+webhookCols+` FROM registry_webhooks WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("Webhook with ID %s not found.: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := edit(&w); err != nil {
			return err
		}
		events, err := json.Marshal(w.Events)
		if err != nil {
			return err
		}
		out = w
		_, err = tx.ExecContext(ctx, `UPDATE registry_webhooks SET name = ?, description = ?, url = ?, events = ?, secret = ?,
			status = ?, updated_at = ? WHERE id = ?`, w.Name, w.Description, w.URL, string(events), w.Secret, w.Status, nanos(w.Updated), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteWebhook removes a webhook and its deliveries; none is ErrNotFound.
func (s *Webhooks) DeleteWebhook(ctx context.Context, id string) error {
	return s.inTx(ctx, "delete webhook "+id, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = ?`, id); err != nil {
			return err
		}
		return execOne(ctx, tx, "delete webhook "+id, "Webhook with ID "+id+" not found.", `DELETE FROM registry_webhooks WHERE id = ?`, id)
	})
}

// appendEvent is the outbox: it records a registry event in tx, the transaction of the write it
// tells of, with a pending delivery, due at once, for each active webhook subscribed to it. So
// an event is accepted exactly when its write commits, and a delivery outlives a restart.
func appendEvent(ctx context.Context, tx *sql.Tx, event string, payload any, at time.Time) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("event %s: %w", event, err)
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO registry_events (event, payload, created_at) VALUES (?, ?, ?) RETURNING seq`,
		event, string(body), nanos(at)).Scan(&seq); err != nil {
		return fmt.Errorf("append event %s: %w", event, err)
	}
	hooks, err := queryAll(ctx, tx, scanWebhook, `SELECT `+webhookCols+` FROM registry_webhooks WHERE status = ?`, WebhookActive)
	if err != nil {
		return fmt.Errorf("event %s: webhooks: %w", event, err)
	}
	for _, h := range hooks {
		if !slices.Contains(h.Events, event) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_seq, next_attempt_at, updated_at)
			VALUES (?, ?, ?, ?, ?)`, NewUUID(), h.ID, seq, nanos(at), nanos(at)); err != nil {
			return fmt.Errorf("event %s: delivery to webhook %s: %w", event, h.ID, err)
		}
	}
	return nil
}

const deliverySelect = `SELECT d.id, d.webhook_id, w.url, w.secret, e.event, e.payload, e.created_at, d.state, d.attempts,
	d.next_attempt_at, d.last_status, d.last_error
	FROM webhook_deliveries d JOIN registry_webhooks w ON w.id = d.webhook_id JOIN registry_events e ON e.seq = d.event_seq`

func scanDelivery(sc scanner) (Delivery, error) {
	var d Delivery
	var payload string
	var eventAt, next int64
	if err := sc.Scan(&d.ID, &d.WebhookID, &d.URL, &d.Secret, &d.Event, &payload, &eventAt, &d.State, &d.Attempts,
		&next, &d.LastStatus, &d.LastError); err != nil {
		return Delivery{}, err
	}
	d.Payload = json.RawMessage(payload)
	d.EventAt, d.NextAt = fromNanos(eventAt), fromNanos(next)
	return d, nil
}

// DueDeliveries lists up to limit pending deliveries due at now, to active webhooks, in the
// order their events happened. A disabled webhook's wait until it is enabled again.
func (s *Webhooks) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]Delivery, error) {
	out, err := queryAll(ctx, s.db, scanDelivery, deliverySelect+`
		WHERE d.state = ? AND d.next_attempt_at <= ? AND w.status = ? ORDER BY d.event_seq, d.id LIMIT ?`,
		DeliveryPending, nanos(now), WebhookActive, limit)
	if err != nil {
		return nil, fmt.Errorf("due webhook deliveries: %w", err)
	}
	return out, nil
}

// Deliveries lists a webhook's deliveries ("" every webhook's), in the order their events
// happened.
func (s *Webhooks) Deliveries(ctx context.Context, webhookID string) ([]Delivery, error) {
	q, args := deliverySelect, []any{}
	if webhookID != "" {
		q += ` WHERE d.webhook_id = ?`
		args = append(args, webhookID)
	}
	out, err := queryAll(ctx, s.db, scanDelivery, q+` ORDER BY d.event_seq, d.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("webhook deliveries: %w", err)
	}
	return out, nil
}

// RecordAttempt records one try of a pending delivery: one more attempt, and its outcome. A
// delivery no longer pending (or gone with its webhook) is left as it is.
func (s *Webhooks) RecordAttempt(ctx context.Context, id string, a Attempt) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?,
		last_status = ?, last_error = ?, updated_at = ? WHERE id = ? AND state = ?`,
		a.State, nanos(a.NextAt), a.Status, a.Error, nanos(a.At), id, DeliveryPending); err != nil {
		return fmt.Errorf("record webhook delivery %s: %w", id, err)
	}
	return s.sync(ctx)
}

// PruneDeliveries removes deliveries that ended (delivered or failed) before cutoff, and the
// events no delivery names any more that happened before it; it says how many deliveries went.
func (s *Webhooks) PruneDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := s.withTx(ctx, "prune webhook deliveries", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE state != ? AND updated_at < ?`, DeliveryPending, nanos(cutoff))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM registry_events WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = registry_events.seq)`, nanos(cutoff))
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// RegistryEvents lists the events appended since seq (exclusive), oldest first.
func (s *Webhooks) RegistryEvents(ctx context.Context, after int64) ([]RegistryEvent, error) {
	out, err := queryAll(ctx, s.db, func(sc scanner) (RegistryEvent, error) {
		var e RegistryEvent
		var payload string
		var at int64
		err := sc.Scan(&e.Seq, &e.Event, &payload, &at)
		e.Payload, e.At = json.RawMessage(payload), fromNanos(at)
		return e, err
	}, `SELECT seq, event, payload, created_at FROM registry_events WHERE seq > ? ORDER BY seq`, after)
	if err != nil {
		return nil, fmt.Errorf("registry events: %w", err)
	}
	return out, nil
}

// RegistryEvent is one change of MLflow's registry as its webhooks tell it: MLflow's event name
// and payload (the data of its POST).
type RegistryEvent struct {
	Seq     int64
	Event   string
	Payload json.RawMessage
	At      time.Time
}
