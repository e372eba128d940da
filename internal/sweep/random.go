package sweep

import (
	"math/rand/v2"
)

// trialRand is the randomness of trial i: a PCG seeded with the sweep's seed and i, so trial i
// draws the same values whether or not the server restarted since trial i-1 was created.
func trialRand(seed int64, i uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), i))
}

// unitPoint is one uniform point of the unit cube, one coordinate per parameter.
func unitPoint(r *rand.Rand, dims int) []float64 {
	u := make([]float64, dims)
	for d := range u {
		u[d] = r.Float64()
	}
	return u
}

// paramsAt maps a point of the unit cube to parameters, coordinate d to the d-th name.
func (s Space) paramsAt(names []string, u []float64) Params {
	p := make(Params, len(names))
	for d, name := range names {
		p[name] = s[name].at(u[d])
	}
	return p
}

// randomCandidates are trial i's draws under rule random or sobol, in the order they are
// tried: the first is the trial's own draw, the others stand in when it was already tried
// (uniform draws from the trial's own stream, for sobol too: a duplicate only happens in a
// small discrete space, where the sequence's evenness no longer matters).
func randomCandidates(cfg Config, names []string, i int, n int) [][]float64 {
	out := make([][]float64, 0, n)
	if cfg.Sampling.Rule == "sobol" {
		shift := sobolShift(cfg.Sampling.Seed, len(names))
		out = append(out, sobolPoint(uint64(i)+1, len(names), shift))
	}
	r := trialRand(cfg.Sampling.Seed, uint64(i))
	for len(out) < n {
		out = append(out, unitPoint(r, len(names)))
	}
	return out
}
