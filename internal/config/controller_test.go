package config

import (
	"testing"
	"time"
)

func TestWithDefaults(t *testing.T) {
	if got := (Controller{}).WithDefaults(); got != DefaultController {
		t.Errorf("zero settings: %+v, want the defaults %+v", got, DefaultController)
	}
	set := Controller{Heartbeat: time.Second, TokenGrace: time.Hour, UnreachableLimit: time.Minute}
	got := set.WithDefaults()
	want := DefaultController
	want.Heartbeat, want.TokenGrace, want.UnreachableLimit = time.Second, time.Hour, time.Minute
	if got != want {
		t.Errorf("%+v.WithDefaults() = %+v, want %+v", set, got, want)
	}
}

// Every tunable has a default: a zero field left zero would stop the loop (Tick) or fail
// queued runs at once (UnreachableLimit).
func TestDefaultsAreSet(t *testing.T) {
	d := DefaultController
	for name, v := range map[string]time.Duration{
		"Heartbeat": d.Heartbeat, "StaleAfter": d.StaleAfter, "NotRespondingAfter": d.NotRespondingAfter,
		"LostAfter": d.LostAfter, "CancelGrace": d.CancelGrace, "Tick": d.Tick, "TokenTTL": d.TokenTTL,
		"TokenGrace": d.TokenGrace, "NodeOutputsWait": d.NodeOutputsWait, "UnreachableLimit": d.UnreachableLimit,
		"Resync": d.Resync, "KeepRunDirs": d.KeepRunDirs, "BlobGrace": d.BlobGrace, "GCEvery": d.GCEvery,
	} {
		if v <= 0 {
			t.Errorf("DefaultController.%s = %s, want > 0", name, v)
		}
	}
}
