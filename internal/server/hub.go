package server

import "sync"

// hub lets request handlers wait for a run to change (new log lines, a new status).
type hub struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func newHub() *hub { return &hub{ch: map[string]chan struct{}{}} }

// wait returns a channel closed at the run's next change.
func (h *hub) wait(runID string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.ch[runID]
	if !ok {
		c = make(chan struct{})
		h.ch[runID] = c
	}
	return c
}

// notify wakes the run's waiters.
func (h *hub) notify(runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.ch[runID]; ok {
		close(c)
		delete(h.ch, runID)
	}
}
