package objstore

import "sync"

// Stats say what a Download or an Upload did, for the run's log and `job show`.
type Stats struct {
	// Objects and Bytes are what reached the destination (Download) or the store (Upload).
	Objects int
	Bytes   int64
	// Fetched and FetchedBytes came from the store (a resumed read's bytes counted once each
	// time they were transferred); Cached and CachedBytes from the node cache.
	Fetched      int
	FetchedBytes int64
	Cached       int
	CachedBytes  int64
	// Resumed counts the reads taken up again after a broken connection.
	Resumed int
	// Warnings are what was left out, and why (an upload's symbolic links, say).
	Warnings []string
}

// tally adds to Stats from the concurrent transfers.
type tally struct {
	mu sync.Mutex
	s  Stats
}

func (t *tally) add(f func(*Stats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.s)
}

func (t *tally) stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.s
	s.Warnings = append([]string(nil), t.s.Warnings...)
	return s
}
