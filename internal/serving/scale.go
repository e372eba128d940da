package serving

import (
	"fmt"
	"time"
)

// Defaults of the scale decision, as in Azure's schema where it has one.
const (
	DefaultTargetUtilization = 70
	DefaultMaxConcurrent     = 1
	DefaultScaleDownDelay    = 300 * time.Second
)

// LoadSample is a deployment's load at one moment, as the router counts it.
type LoadSample struct {
	At       time.Time
	InFlight int // requests being served by a replica
	Held     int // requests waiting: for a free slot, or for a replica to be ready
}

// ScaleInput is what the replica count of one deployment is decided from. Samples should reach
// back at least the scale-down delay; the decision never reads a clock.
type ScaleInput struct {
	Scale         ScaleSettings
	Request       RequestSettings
	InstanceCount int
	// Starting and Ready are the deployment's current replicas.
	Starting, Ready int
	Samples         []LoadSample
	LastRequest     time.Time // zero: none since the router started
	Now             time.Time
}

// ScaleDecision is the replica count wanted and why.
type ScaleDecision struct {
	Replicas int
	Reason   string
}

// DecideScale returns how many replicas one deployment should have. With the default scale
// type that is instance_count. With target_utilization it is the load (in flight plus held)
// over TargetUtilization percent of max_concurrent_requests_per_instance per replica, rounded
// up and kept within [min_instances, max_instances]: more replicas at once, fewer only once
// the demand has been lower for the whole scale-down delay, and none only after that long
// without a request. A held request with no replica asks for one at once, whatever the bounds.
func DecideScale(in ScaleInput) ScaleDecision {
	if in.Scale.Type != ScaleTargetUtilization {
		n := max(in.InstanceCount, 0)
		return ScaleDecision{n, fmt.Sprintf("instance_count %d", n)}
	}
	p := utilization(in)
	cur := in.Starting + in.Ready
	last := latest(in.Samples, in.Now)
	want := p.clamp(p.need(last))
	switch {
	case cur == 0 && last.Held > 0:
		n := max(want, 1)
		return ScaleDecision{n, fmt.Sprintf("scale from zero: %d %s held", last.Held, plural(last.Held, "request"))}
	case cur > p.max:
		return ScaleDecision{p.max, fmt.Sprintf("scale in to max_instances %d", p.max)}
	case want > cur:
		return ScaleDecision{want, fmt.Sprintf("scale out: %s, %s", p.load(last), p.rule())}
	case want == cur:
		return ScaleDecision{cur, fmt.Sprintf("steady: %s, %s", p.load(last), p.rule())}
	}
	return p.scaleDown(in, cur)
}

// scaleDown lowers the count to the highest demand seen over the delay, once the samples
// cover it; the last replica goes only after the delay without any request.
func (p policy) scaleDown(in ScaleInput, cur int) ScaleDecision {
	from := in.Now.Add(-p.delay)
	covered, peak := false, 0
	for _, s := range in.Samples {
		if s.At.After(in.Now) {
			continue
		}
		if !s.At.After(from) {
			covered = true
		}
		if !s.At.Before(from) {
			peak = max(peak, p.need(s))
		}
	}
	if !covered {
		return ScaleDecision{cur, fmt.Sprintf("hold at %d: demand lower for less than the scale-down delay %s", cur, p.delay)}
	}
	want := p.clamp(peak)
	if want >= cur {
		return ScaleDecision{cur, fmt.Sprintf("hold at %d: demand within the scale-down delay %s needs them", cur, p.delay)}
	}
	if want == 0 {
		idle := in.Now.Sub(in.LastRequest)
		if !in.LastRequest.IsZero() && idle < p.delay {
			return ScaleDecision{max(1, want), fmt.Sprintf("hold at 1: last request %s ago, scale to zero after %s", idle.Round(time.Second), p.delay)}
		}
		if in.LastRequest.IsZero() {
			return ScaleDecision{0, fmt.Sprintf("scale to zero: no request for %s", p.delay)}
		}
		return ScaleDecision{0, fmt.Sprintf("scale to zero: idle for %s", idle.Round(time.Second))}
	}
	return ScaleDecision{want, fmt.Sprintf("scale in: at most %d %s over the last %s, %s", peak, plural(peak, "replica"), p.delay, p.rule())}
}

// policy is target_utilization's settings with their defaults filled in.
type policy struct {
	min, max, perReplica, target int
	delay                        time.Duration
}

func utilization(in ScaleInput) policy {
	p := policy{min: max(in.Scale.MinInstances, 0), max: in.Scale.MaxInstances,
		perReplica: in.Request.MaxConcurrentRequestsPerInstance, target: in.Scale.TargetUtilization,
		delay: time.Duration(in.Scale.ScaleDownDelay) * time.Second}
	if p.perReplica <= 0 {
		p.perReplica = DefaultMaxConcurrent
	}
	if p.target <= 0 || p.target > 100 {
		p.target = DefaultTargetUtilization
	}
	if p.delay <= 0 {
		p.delay = DefaultScaleDownDelay
	}
	p.max = max(p.max, p.min, 1)
	return p
}

// need is ceil(load / (perReplica × target%)) in integers, so 7 requests at 3 per replica and
// 70% need ceil(700/210) = 4.
func (p policy) need(s LoadSample) int {
	load := max(s.InFlight+s.Held, 0)
	per := p.perReplica * p.target
	return (load*100 + per - 1) / per
}

func (p policy) clamp(n int) int { return min(max(n, p.min), p.max) }

func (p policy) rule() string {
	return fmt.Sprintf("%d per replica at %d%% target", p.perReplica, p.target)
}

func (p policy) load(s LoadSample) string {
	out := fmt.Sprintf("%d %s in flight", s.InFlight, plural(s.InFlight, "request"))
	if s.Held > 0 {
		out += fmt.Sprintf(", %d held", s.Held)
	}
	return out
}

// latest is the newest sample not after now (zero load when there is none).
func latest(samples []LoadSample, now time.Time) LoadSample {
	var out LoadSample
	for _, s := range samples {
		if !s.At.After(now) && !s.At.Before(out.At) {
			out = s
		}
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
