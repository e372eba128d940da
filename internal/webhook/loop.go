package webhook

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tick"
)

// Deliveries is what the loop asks of the store: the due deliveries, each attempt's outcome
// recorded, old ones pruned.
type Deliveries interface {
	DueDeliveries(ctx context.Context, now time.Time, limit int) ([]store.Delivery, error)
	RecordAttempt(ctx context.Context, id string, a store.Attempt) error
	PruneDeliveries(ctx context.Context, cutoff time.Time) (int64, error)
}

// Opener opens a sealed secret (the workspace's sealer).
type Opener interface {
	Decrypt(ciphertext string) ([]byte, error)
}

// LoopConfig is what the delivery loop is made of.
type LoopConfig struct {
	Store  Deliveries
	Sealer Opener
	Sender *Sender
	Policy Policy // zero: DefaultPolicy
	// Now is the clock (nil: time.Now); Jitter the extra wait after a backoff d, in [0, d)
	// (nil: up to a quarter of d, at random).
	Now    func() time.Time
	Jitter func(d time.Duration) time.Duration
	// Every is how often the loop looks for due deliveries (0: a second).
	Every time.Duration
	// Keep is how long ended deliveries are kept (0: 7 days).
	Keep time.Duration
	Log  *slog.Logger
}

// Loop sends the store's due deliveries, each webhook's in the order of their events and
// several webhooks at once, and records every attempt.
type Loop struct {
	cfg       LoopConfig
	lastPrune time.Time
}

// maxDue bounds one pass's deliveries; maxWebhooks, the webhooks sent to at once.
const (
	maxDue      = 64
	maxWebhooks = 8
)

// NewLoop returns the loop over cfg, its defaults filled in.
func NewLoop(cfg LoopConfig) *Loop {
	if cfg.Policy == (Policy{}) {
		cfg.Policy = DefaultPolicy
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func(d time.Duration) time.Duration { return rand.N(d/4 + 1) }
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Second
	}
	if cfg.Keep <= 0 {
		cfg.Keep = 7 * 24 * time.Hour
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Loop{cfg: cfg}
}

// Run passes every cfg.Every until ctx ends.
func (l *Loop) Run(ctx context.Context) { tick.Loop(ctx, l.cfg.Every, nil, l.Pass) }

// Pass sends what is due now, and once an hour prunes what ended more than Keep ago.
func (l *Loop) Pass(ctx context.Context) {
	now := l.cfg.Now()
	if now.Sub(l.lastPrune) >= time.Hour {
		l.lastPrune = now
		if _, err := l.cfg.Store.PruneDeliveries(ctx, now.Add(-l.cfg.Keep)); err != nil {
			l.cfg.Log.Warn("prune webhook deliveries", "err", err)
		}
	}
	due, err := l.cfg.Store.DueDeliveries(ctx, now, maxDue)
	if err != nil {
		if ctx.Err() == nil {
			l.cfg.Log.Warn("webhook deliveries", "err", err)
		}
		return
	}
	var order []string
	byHook := map[string][]store.Delivery{}
	for _, d := range due {
		if _, ok := byHook[d.WebhookID]; !ok {
			order = append(order, d.WebhookID)
		}
		byHook[d.WebhookID] = append(byHook[d.WebhookID], d)
	}
	slots := make(chan struct{}, maxWebhooks)
	var wg sync.WaitGroup
	for _, id := range order {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			for _, d := range byHook[id] {
				l.deliver(ctx, d)
			}
		})
	}
	wg.Wait()
}

// deliver makes one attempt of d and records what Decide makes of its outcome.
func (l *Loop) deliver(ctx context.Context, d store.Delivery) {
	o := l.attempt(ctx, d)
	if ctx.Err() != nil {
		return // the server stops: the delivery stays due, and goes again after the restart
	}
	a := l.cfg.Policy.Decide(d.Attempts+1, o, l.cfg.Now(), l.cfg.Jitter)
	if err := l.cfg.Store.RecordAttempt(ctx, d.ID, a); err != nil {
		l.cfg.Log.Warn("record a webhook delivery", "delivery", d.ID, "err", err)
		return
	}
	if a.State == store.DeliveryFailed {
		l.cfg.Log.Warn("webhook delivery failed for good", "webhook", d.WebhookID, "delivery", d.ID, "event", d.Event,
			"attempts", d.Attempts+1, "err", a.Error)
	}
}

// errSecret is an attempt that could not be signed; it is retried like no answer, since a key
// rotation in progress may be why.
var errSecret = errors.New("the webhook's secret could not be unsealed")

func (l *Loop) attempt(ctx context.Context, d store.Delivery) Outcome {
	var secret string
	if d.Secret != "" {
		b, err := l.cfg.Sealer.Decrypt(d.Secret)
		if err != nil {
			l.cfg.Log.Warn("unseal a webhook's secret", "webhook", d.WebhookID, "err", err)
			return Outcome{Err: errSecret}
		}
		secret = string(b)
	}
	body, err := Body(d.Event, d.Payload, d.EventAt)
	if err != nil {
		return Outcome{Err: err}
	}
	resp, err := l.cfg.Sender.Send(ctx, Request{URL: d.URL, Secret: secret, DeliveryID: d.ID, Body: body, At: l.cfg.Now()})
	if err != nil {
		return Outcome{Err: err}
	}
	return Outcome{Status: resp.Status}
}
