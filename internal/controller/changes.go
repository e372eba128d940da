package controller

import "sync"

// changes fans a run's change out to every listener that subscribed (the server's log and status
// waiters, ...): none of them replaces another's.
type changes struct {
	mu   sync.RWMutex
	subs []func(runID string)
}

// OnChange subscribes fn to run changes: it is called, after each change, with the run's id.
// fn must not block (it runs on the goroutine that changed the run). Safe for concurrent use.
func (c *Controller) OnChange(fn func(runID string)) {
	c.changes.mu.Lock()
	defer c.changes.mu.Unlock()
	c.changes.subs = append(c.changes.subs, fn)
}

// Changed tells every subscriber that a run changed.
func (c *Controller) Changed(runID string) {
	c.changes.mu.RLock()
	subs := c.changes.subs
	c.changes.mu.RUnlock()
	for _, fn := range subs {
		fn(runID)
	}
}
