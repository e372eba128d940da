package controller

import (
	"slices"
	"sync"
	"testing"
)

// Every subscriber hears every change, in the order they subscribed: a second listener (the
// server's waiters, then another) no longer replaces the first.
func TestChangedReachesEverySubscriber(t *testing.T) {
	c := &Controller{}
	var mu sync.Mutex
	var heard []string
	listen := func(name string) func(string) {
		return func(runID string) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, name+":"+runID)
		}
	}
	c.Changed("before anyone listens") // no subscriber: nothing to call, no panic
	c.OnChange(listen("server"))
	c.OnChange(listen("other"))
	c.Changed("r1")
	var wg sync.WaitGroup
	for range 8 { // subscribing while changes are announced is safe (go test -race)
		wg.Add(2)
		go func() { defer wg.Done(); c.Changed("r2") }()
		go func() { defer wg.Done(); c.OnChange(func(string) {}) }()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"server:r1", "other:r1"}; !slices.Equal(heard[:2], want) {
		t.Errorf("heard %v, want %v first", heard, want)
	}
	if n := len(heard); n != 2+2*8 {
		t.Errorf("heard %d notifications, want %d (both subscribers, every change)", n, 2+2*8)
	}
}
