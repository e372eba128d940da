package sweep

import (
	"fmt"
	"time"
)

// Decide is the sweep controller's whole decision for now: trials to stop, with reasons (the
// sweep's timeout, a trial's trial_timeout, the early termination policy), then how many trials
// to start and their parameters. It starts max_concurrent_trials minus the trials queued or
// running (those being stopped, now or before, do not count), never past max_total_trials or
// the size of a discrete space, and never a parameter set already tried. Done is set, with no
// trial to start, once no trial will ever start again; the runner waits for the trials still
// running. An invalid Config gives Done with the error as the Reason.
func Decide(cfg Config, st State) Decision {
	cfg = cfg.normalized()
	if err := cfg.Validate(); err != nil {
		return Decision{Done: true, Reason: "invalid sweep: " + err.Error()}
	}
	var d Decision
	if cfg.Limits.Timeout > 0 && !st.Started.IsZero() && st.Now.Sub(st.Started) >= cfg.Limits.Timeout {
		why := fmt.Sprintf("timeout %s reached", cfg.Limits.Timeout)
		for _, t := range st.Trials {
			if (t.State == Queued || t.State == Running) && t.Stopped == "" {
				d.Stop = append(d.Stop, Stop{Index: t.Index, Reason: "the sweep's " + why})
			}
		}
		d.Done, d.Reason = true, why
		return d
	}
	d.Stop = stops(cfg, st)
	stopping := map[int]bool{}
	for _, s := range d.Stop {
		stopping[s.Index] = true
	}
	active := 0
	for _, t := range st.Trials {
		if (t.State == Queued || t.State == Running) && t.Stopped == "" && !stopping[t.Index] {
			active++
		}
	}
	n := len(st.Trials)
	limit, why := trialLimit(cfg)
	if limit > 0 && n >= limit {
		d.Done, d.Reason = true, why
		return d
	}
	slots := concurrency(cfg, limit) - active
	if limit > 0 {
		slots = min(slots, limit-n)
	}
	if slots <= 0 {
		return d
	}
	next := 0 // the runner numbers a new trial after the highest index, as Decision says
	for _, t := range st.Trials {
		next = max(next, t.Index+1)
	}
	s := newSampler(cfg, st.Trials)
	for k := range slots {
		p, ok := s.draw(next + k)
		if !ok {
			if k == 0 {
				d.Done, d.Reason = true, s.exhausted()
			}
			break
		}
		d.Start = append(d.Start, p)
	}
	return d
}

// stops are the trials to stop for their trial_timeout, then for the termination policy.
func stops(cfg Config, st State) []Stop {
	var out []Stop
	timedOut := map[int]bool{}
	if tt := cfg.Limits.TrialTimeout; tt > 0 {
		for _, t := range st.Trials {
			if stoppable(t) && !t.Started.IsZero() && st.Now.Sub(t.Started) >= tt {
				timedOut[t.Index] = true
				out = append(out, Stop{Index: t.Index, Reason: fmt.Sprintf(
					"trial_timeout %s: running for %s", tt, st.Now.Sub(t.Started).Round(time.Second))})
			}
		}
	}
	for _, s := range policyStops(cfg, st.Trials) {
		if !timedOut[s.Index] {
			out = append(out, s)
		}
	}
	return out
}

// trialLimit is how many trials the sweep may create in all (0: no limit) and the Reason given
// when they are: max_total_trials, or the size of a grid or of a space of choices and randints.
func trialLimit(cfg Config) (int, string) {
	limit := cfg.Limits.MaxTotalTrials
	why := fmt.Sprintf("max_total_trials %d reached", limit)
	if size := cfg.Space.size(); size > 0 && (limit == 0 || size < limit) {
		limit = size
		why = fmt.Sprintf("all %d parameter sets of the search space are tried", size)
		if cfg.Sampling.Type == "grid" {
			why = fmt.Sprintf("all %d points of the grid are tried", size)
		}
	}
	return limit, why
}

// concurrency is max_concurrent_trials, else max_total_trials, else the space's size, else 1.
func concurrency(cfg Config, limit int) int {
	for _, c := range []int{cfg.Limits.MaxConcurrentTrials, cfg.Limits.MaxTotalTrials, limit} {
		if c > 0 {
			return c
		}
	}
	return 1
}

// Best is the best trial by the objective. A trial's value is its last report of the primary
// metric (as Azure's best_child_run_id uses the final value, not the best one along the way);
// only trials that reported count, whatever their state; a NaN is worse than any number; ties
// go to the lowest index.
func Best(cfg Config, trials []Trial) (Trial, bool) {
	g := goalOf(cfg.normalized().Objective)
	var last []Trial
	for _, t := range trials {
		if len(t.Metrics) > 0 {
			t.Metrics = t.Metrics[len(t.Metrics)-1:]
			last = append(last, t)
		}
	}
	ps := peersAt(g, last, 1)
	if len(ps) == 0 {
		return Trial{}, false
	}
	for _, t := range trials {
		if t.Index == ps[0].index {
			return t, true
		}
	}
	return Trial{}, false
}
