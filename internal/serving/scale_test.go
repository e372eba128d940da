package serving

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func TestDecideScale(t *testing.T) {
	tu := ScaleSettings{Type: ScaleTargetUtilization, MinInstances: 1, MaxInstances: 10, TargetUtilization: 70}
	zero := ScaleSettings{Type: ScaleTargetUtilization, MinInstances: 0, MaxInstances: 3}
	req := RequestSettings{MaxConcurrentRequestsPerInstance: 3}
	at := func(ago time.Duration, inflight, held int) LoadSample {
		return LoadSample{At: t0.Add(-ago), InFlight: inflight, Held: held}
	}
	for _, tc := range []struct {
		name string
		in   ScaleInput
		want ScaleDecision
	}{
		{"default", ScaleInput{Scale: ScaleSettings{Type: ScaleDefault}, InstanceCount: 3, Ready: 1},
			ScaleDecision{3, "instance_count 3"}},
		{"default when unset", ScaleInput{InstanceCount: 2}, ScaleDecision{2, "instance_count 2"}},
		{"scale out", ScaleInput{Scale: tu, Request: req, Ready: 2, Samples: []LoadSample{at(0, 7, 0)}},
			ScaleDecision{4, "scale out: 7 requests in flight, 3 per replica at 70% target"}},
		{"scale out counts held", ScaleInput{Scale: tu, Request: req, Ready: 2, Samples: []LoadSample{at(0, 6, 1)}},
			ScaleDecision{4, "scale out: 6 requests in flight, 1 held, 3 per replica at 70% target"}},
		{"max bound", ScaleInput{Scale: tu, Request: req, Ready: 2, Samples: []LoadSample{at(0, 100, 0)}},
			ScaleDecision{10, "scale out: 100 requests in flight, 3 per replica at 70% target"}},
		{"steady", ScaleInput{Scale: tu, Request: req, Ready: 4, Samples: []LoadSample{at(0, 7, 0)}},
			ScaleDecision{4, "steady: 7 requests in flight, 3 per replica at 70% target"}},
		{"min bound", ScaleInput{Scale: tu, Request: req, Ready: 0, Samples: nil},
			ScaleDecision{1, "scale out: 0 requests in flight, 3 per replica at 70% target"}},
		{"over max after an update", ScaleInput{Scale: tu, Request: req, Ready: 12},
			ScaleDecision{10, "scale in to max_instances 10"}},
		{"lower demand, not for long enough", ScaleInput{Scale: tu, Request: req, Ready: 4, Now: t0,
			Samples: []LoadSample{at(299*time.Second, 1, 0), at(0, 1, 0)}},
			ScaleDecision{4, "hold at 4: demand lower for less than the scale-down delay 5m0s"}},
		{"peak within the delay", ScaleInput{Scale: tu, Request: req, Ready: 4, Now: t0,
			Samples: []LoadSample{at(300*time.Second, 1, 0), at(100*time.Second, 7, 0), at(0, 1, 0)}},
			ScaleDecision{4, "hold at 4: demand within the scale-down delay 5m0s needs them"}},
		{"scale in after the delay", ScaleInput{Scale: tu, Request: req, Ready: 4, Now: t0,
			Samples: []LoadSample{at(400*time.Second, 7, 0), at(300*time.Second, 3, 0), at(0, 1, 0)}},
			ScaleDecision{2, "scale in: at most 2 replicas over the last 5m0s, 3 per replica at 70% target"}},
		{"scale to zero", ScaleInput{Scale: zero, Request: req, Ready: 1, Now: t0, LastRequest: t0.Add(-5 * time.Minute),
			Samples: []LoadSample{at(5*time.Minute, 0, 0), at(0, 0, 0)}},
			ScaleDecision{0, "scale to zero: idle for 5m0s"}},
		{"not yet idle long enough", ScaleInput{Scale: zero, Request: req, Ready: 1, Now: t0, LastRequest: t0.Add(-299 * time.Second),
			Samples: []LoadSample{at(5*time.Minute, 0, 0), at(0, 0, 0)}},
			ScaleDecision{1, "hold at 1: last request 4m59s ago, scale to zero after 5m0s"}},
		{"custom delay", ScaleInput{Scale: ScaleSettings{Type: ScaleTargetUtilization, MaxInstances: 2, ScaleDownDelay: 60}, Ready: 1, Now: t0,
			LastRequest: t0.Add(-time.Minute), Samples: []LoadSample{at(time.Minute, 0, 0)}},
			ScaleDecision{0, "scale to zero: idle for 1m0s"}},
		{"held request wakes from zero", ScaleInput{Scale: zero, Request: req, Now: t0, Samples: []LoadSample{at(0, 0, 1)}},
			ScaleDecision{1, "scale from zero: 1 request held"}},
		{"held requests wake several", ScaleInput{Scale: zero, Request: req, Now: t0, Samples: []LoadSample{at(0, 0, 5)}},
			ScaleDecision{3, "scale from zero: 5 requests held"}},
		{"samples after now ignored", ScaleInput{Scale: tu, Request: req, Ready: 1, Now: t0,
			Samples: []LoadSample{at(-time.Second, 50, 0), at(0, 1, 0)}},
			ScaleDecision{1, "steady: 1 request in flight, 3 per replica at 70% target"}},
	} {
		if tc.in.Now.IsZero() {
			tc.in.Now = t0
		}
		if got := DecideScale(tc.in); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// The scale-down delay is exact: a nanosecond short of it nothing is removed.
func TestScaleDownDelayBoundary(t *testing.T) {
	in := ScaleInput{Scale: ScaleSettings{Type: ScaleTargetUtilization, MaxInstances: 2}, Ready: 1,
		LastRequest: t0, Samples: []LoadSample{{At: t0}}}
	in.Now = t0.Add(DefaultScaleDownDelay - time.Nanosecond)
	if d := DecideScale(in); d.Replicas != 1 {
		t.Fatalf("1ns before the delay: %+v", d)
	}
	in.Now = t0.Add(DefaultScaleDownDelay)
	in.Samples = append(in.Samples, LoadSample{At: in.Now})
	if d := DecideScale(in); d.Replicas != 0 {
		t.Fatalf("at the delay: %+v", d)
	}
}
