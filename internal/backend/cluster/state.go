package cluster

import (
	"context"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/store"
)

// The clusters' decision state lives in the store (store.PoolState), so that a restarted server
// keeps backing off a failing provider and still tells waiting runs why. b.state is the copy last
// written: a pass writes a cluster's state only when it changed.

// init readies the backend on its first pass: its start time and the state the store kept.
func (b *Backend) init(ctx context.Context, now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != nil {
		return nil
	}
	states, err := b.Store.Cluster.PoolStates(ctx)
	if err != nil {
		return err
	}
	b.state = map[string]*store.PoolState{}
	for pool, st := range states {
		b.state[pool] = &st
	}
	b.deleting, b.polled, b.started = map[string]bool{}, map[string]time.Time{}, now
	return nil
}

// poolState returns a copy of a cluster's state.
func (b *Backend) poolState(pool string) store.PoolState {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.state[pool]; st != nil {
		return *st
	}
	return store.PoolState{Pool: pool}
}

// updateState changes a cluster's state and writes it to the store if anything changed.
func (b *Backend) updateState(ctx context.Context, pool string, fn func(st *store.PoolState)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == nil {
		b.state = map[string]*store.PoolState{}
	}
	old := b.state[pool]
	st := store.PoolState{Pool: pool}
	if old != nil {
		st = *old
		st.Explain = slices.Clone(old.Explain)
	}
	fn(&st)
	if old != nil && samePoolState(*old, st) {
		return
	}
	st.UpdatedAt = b.now()
	if err := b.Store.Cluster.PutPoolState(context.WithoutCancel(ctx), st); err != nil {
		b.log().Error("record cluster state", "pool", pool, "err", err)
		return // the next change tries again
	}
	b.state[pool] = &st
}

func samePoolState(a, b store.PoolState) bool {
	return a.Failures == b.Failures && a.LastFailure.Equal(b.LastFailure) && a.ProvisionError == b.ProvisionError &&
		a.LastError == b.LastError && a.Target == b.Target && a.Current == b.Current && slices.Equal(a.Explain, b.Explain)
}

func (b *Backend) backoff(pool string) autoscaler.Backoff {
	st := b.poolState(pool)
	return autoscaler.Backoff{Failures: st.Failures, LastFailure: st.LastFailure}
}

// recordError makes msg the cluster's last error (compute show).
func (b *Backend) recordError(ctx context.Context, pool, msg string) {
	b.updateState(ctx, pool, func(st *store.PoolState) { st.LastError = msg })
	b.log().Warn("cluster", "pool", pool, "err", msg)
}
