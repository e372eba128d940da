package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/scheduler"
)

// Job is one submission of the trace.
type Job struct {
	ID        string
	Pool      string
	User      string
	Priority  scheduler.Priority
	Submit    time.Duration // since the start of the day
	Instances int
	PerNode   resources.Vector
	Duration  time.Duration
}

// NodeTime is what the job would cost on dedicated nodes: Instances × Duration.
func (j Job) NodeTime() time.Duration { return time.Duration(j.Instances) * j.Duration }

// TraceConfig shapes the synthetic day.
type TraceConfig struct {
	Length time.Duration // 24h
	// Background jobs per hour, in and out of working hours (09:00–18:00).
	WorkRate, NightRate float64
	// Bursts during working hours, each of BurstMin..BurstMax jobs within BurstSpread.
	Bursts, BurstMin, BurstMax int
	BurstSpread                time.Duration
	GPUShare                   float64 // share of jobs that go to the GPU pool
	Users                      int
	// Durations are log-normal around MedianDuration, clamped to [1m, MaxDuration].
	MedianDuration, MaxDuration time.Duration
	DurationSigma               float64
	CPUPool, GPUPool            string
	CPUSize, GPUSize            resources.Vector
}

// DefaultTraceConfig is a busy team's working day on a CPU and a GPU cluster.
func DefaultTraceConfig() TraceConfig {
	return TraceConfig{
		Length: 24 * time.Hour, WorkRate: 6, NightRate: 0.5,
		Bursts: 6, BurstMin: 5, BurstMax: 25, BurstSpread: 10 * time.Minute,
		GPUShare: 0.25, Users: 8,
		MedianDuration: 15 * time.Minute, MaxDuration: 4 * time.Hour, DurationSigma: 1,
		CPUPool: "cpu", GPUPool: "gpu", CPUSize: d16, GPUSize: nc24,
	}
}

// GenerateTrace draws the day's jobs from seed, sorted by submit time then ID.
func GenerateTrace(seed uint64, c TraceConfig) []Job {
	rng := rand.New(rand.NewPCG(seed, 0x7472616365)) // "trace"
	var submits []time.Duration
	for h := time.Duration(0); h < c.Length; h += time.Hour {
		rate := c.NightRate
		if hour := int(h/time.Hour) % 24; hour >= 9 && hour < 18 {
			rate = c.WorkRate
		}
		for at := h + expo(rng, rate); at < h+time.Hour; at += expo(rng, rate) {
			submits = append(submits, at)
		}
	}
	for range c.Bursts {
		start := 9*time.Hour + time.Duration(rng.Int64N(int64(9*time.Hour)))
		for range c.BurstMin + rng.IntN(c.BurstMax-c.BurstMin+1) {
			submits = append(submits, start+time.Duration(rng.Int64N(int64(c.BurstSpread))))
		}
	}
	slices.Sort(submits)
	jobs := make([]Job, len(submits))
	for i, at := range submits {
		jobs[i] = c.job(rng, fmt.Sprintf("job%04d", i), at)
	}
	slices.SortFunc(jobs, func(a, b Job) int { return cmp.Or(cmp.Compare(a.Submit, b.Submit), strings.Compare(a.ID, b.ID)) })
	return jobs
}

// job draws one job's shape.
func (c TraceConfig) job(rng *rand.Rand, id string, at time.Duration) Job {
	j := Job{ID: id, Submit: at, User: fmt.Sprintf("user%d", rng.IntN(c.Users))}
	j.Priority = pick(rng, []scheduler.Priority{scheduler.PriorityLow, scheduler.PriorityMedium, scheduler.PriorityHigh}, []float64{0.25, 0.55, 0.2})
	j.Instances = pick(rng, []int{1, 2, 3, 4}, []float64{0.55, 0.2, 0.1, 0.15})
	gpu := rng.Float64() < c.GPUShare
	size, pool := c.CPUSize, c.CPUPool
	if gpu {
		size, pool = c.GPUSize, c.GPUPool
	}
	j.Pool, j.PerNode = pool, size
	if j.Instances == 1 { // single-node jobs often take part of a node; gangs take whole nodes
		part := pick(rng, []int64{8, 4, 2, 1}, []float64{0.3, 0.3, 0.2, 0.2})
		if gpu {
			part = pick(rng, []int64{4, 2, 1}, []float64{0.5, 0.3, 0.2})
		}
		j.PerNode = resources.Vector{MilliCPU: size.MilliCPU / part, Memory: size.Memory / part, GPU: size.GPU / part}
	}
	d := float64(c.MedianDuration) * math.Exp(c.DurationSigma*rng.NormFloat64())
	j.Duration = min(max(time.Duration(d), time.Minute), c.MaxDuration).Round(time.Second)
	return j
}

// expo draws an exponential gap for a Poisson process of rate per hour.
func expo(rng *rand.Rand, perHour float64) time.Duration {
	return time.Duration(rng.ExpFloat64() / perHour * float64(time.Hour))
}

// pick draws one of values with the given weights (which sum to 1).
func pick[T any](rng *rand.Rand, values []T, weights []float64) T {
	x := rng.Float64()
	for i, w := range weights {
		if x < w {
			return values[i]
		}
		x -= w
	}
	return values[len(values)-1]
}
