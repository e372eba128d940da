package tick

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestLoopPassesAtOnceOnTicksAndKicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		k := NewKick()
		k.Kick()
		k.Kick() // folds into the first: one pending wake-up
		passes := make(chan time.Time, 10)
		start := time.Now()
		go Loop(ctx, time.Minute, k, func(context.Context) { passes <- time.Now() })
		synctest.Wait()
		if got := len(passes); got != 2 {
			t.Fatalf("passes before the first tick (at once, then the pending kick): got %d, want 2", got)
		}
		k.Kick()
		synctest.Wait()
		if got := len(passes); got != 3 {
			t.Fatalf("passes after a kick: got %d, want 3", got)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := len(passes); got != 4 {
			t.Fatalf("passes after a tick: got %d, want 4", got)
		}
		cancel()
		synctest.Wait()
		for range 4 {
			if at := <-passes; at.Sub(start) > time.Minute {
				t.Fatalf("a pass at %v, after the one tick", at.Sub(start))
			}
		}
	})
}

func TestEveryWaitsForTheFirstTickAndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		done := make(chan struct{})
		n := 0
		ended := make(chan struct{})
		go func() { Every(done, time.Second, func() { n++ }); close(ended) }()
		synctest.Wait()
		if n != 0 {
			t.Fatalf("calls before the first tick: got %d, want 0", n)
		}
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		if n != 3 {
			t.Fatalf("calls after 3 ticks: got %d, want 3", n)
		}
		close(done)
		<-ended
	})
}

func TestChangesWakesTheWaitersOfItsKeyOnce(t *testing.T) {
	var c Changes[string]
	a, a2, b := c.Wait("a"), c.Wait("a"), c.Wait("b")
	c.Changed("a")
	for _, ch := range []<-chan struct{}{a, a2} {
		select {
		case <-ch:
		default:
			t.Fatal("a waiter of a was not woken")
		}
	}
	select {
	case <-b:
		t.Fatal("the waiter of b was woken by a change of a")
	default:
	}
	select {
	case <-c.Wait("a"):
		t.Fatal("a new wait on a ended before the next change")
	default:
	}
	c.Changed("c") // nobody waits: nothing happens
}
