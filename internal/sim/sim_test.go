package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSimulationIsDeterministic(t *testing.T) {
	cfg := DefaultConfig(1)
	policies := []Policy{Hangar(), FixedIdle(10 * time.Minute)}
	first := Compare(cfg, policies...)
	if diff := cmp.Diff(first, Compare(cfg, policies...)); diff != "" {
		t.Fatalf("same seed, different results:\n%s", diff)
	}
	if diff := cmp.Diff(first, Compare(DefaultConfig(2), policies...)); diff == "" {
		t.Fatal("seeds 1 and 2 give identical results")
	}
	if a, b := Markdown(first), Markdown(Compare(cfg, policies...)); a != b {
		t.Fatalf("tables differ:\n%s\n%s", a, b)
	}
}

func TestTraceIsDeterministicAndBursty(t *testing.T) {
	a, b := GenerateTrace(7, DefaultTraceConfig()), GenerateTrace(7, DefaultTraceConfig())
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, different traces:\n%s", diff)
	}
	work, gpu, gangs := 0, 0, 0
	for _, j := range a {
		if h := j.Submit / time.Hour; h >= 9 && h < 18 {
			work++
		}
		if j.PerNode.GPU > 0 {
			gpu++
		}
		if j.Instances > 1 {
			gangs++
		}
		if j.Instances < 1 || j.Instances > 4 || j.Duration < time.Minute {
			t.Fatalf("odd job %+v", j)
		}
	}
	if work < len(a)*2/3 || gpu == 0 || gangs == 0 {
		t.Errorf("%d jobs: %d in working hours, %d GPU, %d gangs", len(a), work, gpu, gangs)
	}
}

// TestSimulationInvariants steps the world and checks, every tick, what the simulated
// provider would notice first: over-committed nodes and clusters beyond max_instances.
func TestSimulationInvariants(t *testing.T) {
	for _, pol := range []Policy{Hangar(), FixedIdle(10 * time.Minute)} {
		cfg := DefaultConfig(3)
		w := newWorld(cfg, GenerateTrace(cfg.Seed, cfg.Trace))
		for ; w.now.Before(cfg.Start.Add(30 * time.Hour)); w.now = w.now.Add(cfg.Tick) {
			w.step(pol)
			for _, p := range w.pools {
				if len(p.nodes) > p.Max {
					t.Fatalf("%s at %s: pool %s has %d nodes > max %d", pol.Name, w.now, p.ID, len(p.nodes), p.Max)
				}
				for _, n := range p.nodes {
					if !n.alloc.Fits(p.Size) || (len(n.runs) > 0) != !n.alloc.IsZero() {
						t.Fatalf("%s at %s: node %s holds %v of %v with %d runs", pol.Name, w.now, n.id, n.alloc, p.Size, len(n.runs))
					}
				}
			}
		}
		r := w.result(pol.Name)
		if r.Completed+r.Failed != r.Jobs || r.Failed > 0 {
			t.Errorf("%s: %d completed, %d failed of %d", pol.Name, r.Completed, r.Failed, r.Jobs)
		}
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	if got := percentile(ds, 50); got != 3 {
		t.Errorf("p50 = %d, want 3", got)
	}
	if got := percentile(ds, 95); got != 5 {
		t.Errorf("p95 = %d, want 5", got)
	}
	if got := percentile(nil, 95); got != 0 {
		t.Errorf("p95 of nothing = %d", got)
	}
}
