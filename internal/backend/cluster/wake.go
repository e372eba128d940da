package cluster

import "sync"

// wakers let a long-polling heartbeat wait for its node's work: the heartbeat takes its node's
// channel before it reads the work, and anything that queues work for the node, or changes its
// state, closes that channel.
type wakers struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

// wait returns the channel closed at the node's next change.
func (w *wakers) wait(node string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = map[string]chan struct{}{}
	}
	c, ok := w.ch[node]
	if !ok {
		c = make(chan struct{})
		w.ch[node] = c
	}
	return c
}

// wake releases every heartbeat waiting on the node.
func (w *wakers) wake(node string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.ch[node]; ok {
		close(c)
		delete(w.ch, node)
	}
}
