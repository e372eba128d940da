package tick

import (
	"context"
	"sync"
	"time"
)

// Kick wakes a loop that waits on it. Kicks sent while one is already pending fold into it, so
// the sender never blocks and the loop runs once for them all.
type Kick chan struct{}

// NewKick returns a Kick with room for the one pending wake-up.
func NewKick() Kick { return make(Kick, 1) }

// Kick wakes the loop soon (at once when it waits; after its current pass when not).
func (k Kick) Kick() {
	select {
	case k <- struct{}{}:
	default:
	}
}

// Loop calls pass at once, then every d and whenever kick fires, until ctx ends. A nil kick
// never fires.
func Loop(ctx context.Context, d time.Duration, kick <-chan struct{}, pass func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
	}
}

// Every calls f every d (the first time after d) until done is closed.
func Every(done <-chan struct{}, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			f()
		}
	}
}

// Changes hands out, for each key, a channel closed at the key's next change: what a long poll
// waits on (take the channel, read the state, then wait on it, so that no change is missed).
// The zero value is ready to use.
type Changes[K comparable] struct {
	mu sync.Mutex
	ch map[K]chan struct{}
}

// Wait returns the channel closed at k's next Changed.
func (c *Changes[K]) Wait(k K) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = map[K]chan struct{}{}
	}
	ch, ok := c.ch[k]
	if !ok {
		ch = make(chan struct{})
		c.ch[k] = ch
	}
	return ch
}

// Changed wakes everyone waiting on k.
func (c *Changes[K]) Changed(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.ch[k]; ok {
		close(ch)
		delete(c.ch, k)
	}
}

// Waiting reports whether anyone took k's channel since its last change (a test's way to know a
// long poll is parked).
func (c *Changes[K]) Waiting(k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.ch[k]
	return ok
}
