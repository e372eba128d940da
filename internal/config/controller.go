package config

import "time"

// Controller tunes the controller (its loop, its judgement of silent runs, run tokens).
type Controller struct {
	// Heartbeat is how often supervisors report; a run silent for StaleAfter is checked with its backend.
	Heartbeat  time.Duration
	StaleAfter time.Duration
	// NotRespondingAfter marks a run whose supervisor is alive but silent this long NotResponding.
	NotRespondingAfter time.Duration
	// LostAfter fails a run whose node has been unreachable (its backend cannot tell its state)
	// this long.
	LostAfter time.Duration
	// UnreachableLimit is how long a queued run waits for a target that does not answer
	// (connection refused, handshake timed out) before it fails with that reason; errors that
	// retrying cannot cure (bad spec, refused authentication) fail a run at once.
	UnreachableLimit time.Duration
	// Resync is how often the loop rereads every active run from the store, as a safety net for
	// changes it was not told about (between, it reads only the runs that changed).
	Resync time.Duration
	// CancelGrace is the time between SIGTERM and SIGKILL of a canceled run's processes.
	CancelGrace time.Duration
	// Tick is the reconcile period.
	Tick time.Duration
	// TokenTTL is how long a run token is valid; supervisors get a fresh one with every heartbeat
	// reply. TokenGrace is how long a run's token still works after the run ended (a late retry
	// of its final report). See controller.Admit.
	TokenTTL, TokenGrace time.Duration
	// NodeOutputsWait bounds how long a multi-node run's artifacts wait for the other nodes'
	// logs and outputs once node 0 delivered its own (see controller.RegisterArtifacts).
	NodeOutputsWait time.Duration
	// KeepRunDirs is how long a run's directory stays on the node (local and SSH targets) after
	// the run ended; its collected files are in the workspace by then (docs/data.md).
	KeepRunDirs time.Duration
	// BlobGrace is how young a blob is kept by the collector whatever references it (an upload
	// for a job being submitted, whose create has not come yet); GCEvery is how often the server
	// collects blobs nothing references (negative: never; `hangar workspace gc` still does).
	BlobGrace, GCEvery time.Duration
}

// DefaultController are used for zero fields.
var DefaultController = Controller{
	Heartbeat: 5 * time.Second, StaleAfter: 15 * time.Second, NotRespondingAfter: 60 * time.Second,
	CancelGrace: 10 * time.Second, Tick: time.Second, LostAfter: 15 * time.Minute,
	TokenTTL: 7 * 24 * time.Hour, TokenGrace: 2 * time.Minute, NodeOutputsWait: 10 * time.Minute,
	UnreachableLimit: 15 * time.Minute, Resync: 5 * time.Minute,
	KeepRunDirs: 5 * time.Minute, BlobGrace: time.Hour, GCEvery: 24 * time.Hour,
}

// WithDefaults returns s with every zero field set from DefaultController.
func (s Controller) WithDefaults() Controller {
	d := DefaultController
	for _, f := range []struct{ v, def *time.Duration }{
		{&s.Heartbeat, &d.Heartbeat}, {&s.StaleAfter, &d.StaleAfter}, {&s.NotRespondingAfter, &d.NotRespondingAfter},
		{&s.LostAfter, &d.LostAfter}, {&s.CancelGrace, &d.CancelGrace}, {&s.Tick, &d.Tick},
		{&s.TokenTTL, &d.TokenTTL}, {&s.TokenGrace, &d.TokenGrace}, {&s.NodeOutputsWait, &d.NodeOutputsWait},
		{&s.UnreachableLimit, &d.UnreachableLimit}, {&s.Resync, &d.Resync},
		{&s.KeepRunDirs, &d.KeepRunDirs}, {&s.BlobGrace, &d.BlobGrace}, {&s.GCEvery, &d.GCEvery},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return s
}
