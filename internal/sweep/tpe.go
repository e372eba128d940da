package sweep

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// The bayesian sampler is a Tree-structured Parzen Estimator (Bergstra et al., "Algorithms for
// Hyper-Parameter Optimization", 2011), independent per parameter as in hyperopt. It works in
// the unit cube of the expressions' quantiles (see expr.go), where every expression's prior is
// uniform: observed trials are split at the gamma quantile of their scores into good and bad,
// each side becomes a Parzen estimator per parameter (the uniform prior plus a Gaussian kernel
// at each observation, truncated to [0,1]; a choice's kernel is its option's slot), and of
// tpeCandidates points drawn from the good estimator the one with the highest l(x)/g(x) wins.
const (
	// tpeStartup is how many observations the model needs; until then the bayesian sampler
	// draws as rule random does (in a sequential sweep: its first 10 trials).
	tpeStartup = 10
	// tpeCandidates is how many points are drawn from l and scored (hyperopt and Optuna: 24).
	tpeCandidates = 24
	// tpeGamma and tpeMaxGood set the good side: the best ceil(gamma·n) observations, at most 25.
	tpeGamma   = 0.25
	tpeMaxGood = 25
	// tpeSigma0 scales the kernels' bandwidth, sigma0·(n+1)^(-1/(d+4)) for n points in d
	// parameters (Scott's rule shape, Optuna's constant), in quantile units.
	tpeSigma0 = 0.2
	// tpeMinSigma keeps a kernel from collapsing onto a point the sampler then repeats.
	tpeMinSigma = 0.01
)

// observation is a trial the model learns from: its point in the unit cube and its score
// (higher is better, see goal).
type observation struct {
	u     []float64
	score float64
	index int
}

// parzen is one side's estimator for one parameter.
type parzen struct {
	points []float64
	sigma  float64
	slots  int // a choice's option count; 0 for an ordered parameter
}

func newParzen(points []float64, slots, dims int) parzen {
	sigma := tpeSigma0 * math.Pow(float64(len(points)+1), -1/float64(dims+4))
	return parzen{points: points, sigma: math.Max(sigma, tpeMinSigma), slots: slots}
}

// pdf is the estimator's density at u (for a choice, the probability of u's option): the
// mixture, with equal weights, of the uniform prior and one kernel per point.
func (p parzen) pdf(u float64) float64 {
	sum := 1.0
	for _, c := range p.points {
		if p.slots > 0 {
			if index(c, p.slots) == index(u, p.slots) {
				sum += float64(p.slots) // a point mass, as a density over its slot
			}
			continue
		}
		sum += truncNormalPDF(u, c, p.sigma)
	}
	return sum / float64(len(p.points)+1)
}

// sample draws from the mixture: a component uniformly, then a value from it.
func (p parzen) sample(r *rand.Rand) float64 {
	j := r.IntN(len(p.points) + 1)
	if j == len(p.points) {
		return r.Float64()
	}
	c := p.points[j]
	if p.slots > 0 {
		return c
	}
	lo, hi := normalCDF(-c/p.sigma), normalCDF((1-c)/p.sigma)
	q := lo + r.Float64()*(hi-lo)
	return clamp01(c + p.sigma*normalQuantile(math.Min(math.Max(q, tiny), 1-tiny)))
}

func truncNormalPDF(u, mu, sigma float64) float64 {
	mass := normalCDF((1-mu)/sigma) - normalCDF(-mu/sigma)
	z := (u - mu) / sigma
	return math.Exp(-z*z/2) / (sigma * math.Sqrt(2*math.Pi) * mass)
}

// splitObservations sorts the observations best first (ties: lower index first) and returns
// the good and the bad ones.
func splitObservations(obs []observation) (good, bad []observation) {
	obs = slices.Clone(obs)
	slices.SortStableFunc(obs, func(a, b observation) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.index - b.index
	})
	n := min(int(math.Ceil(tpeGamma*float64(len(obs)))), tpeMaxGood)
	n = max(n, 1)
	return obs[:n], obs[n:]
}

// tpeModel is the fitted model: per parameter, l (good) and g (bad).
type tpeModel struct{ l, g []parzen }

func fitTPE(s Space, names []string, obs []observation) tpeModel {
	good, bad := splitObservations(obs)
	m := tpeModel{l: make([]parzen, len(names)), g: make([]parzen, len(names))}
	for d, name := range names {
		slots := 0
		if e := s[name]; e.categorical() {
			slots = len(e.Values)
		}
		m.l[d] = newParzen(column(good, d), slots, len(names))
		m.g[d] = newParzen(column(bad, d), slots, len(names))
	}
	return m
}

func column(obs []observation, d int) []float64 {
	c := make([]float64, len(obs))
	for i, o := range obs {
		c[i] = o.u[d]
	}
	return c
}

// score is log l(u) - log g(u), summed over the parameters.
func (m tpeModel) score(u []float64) float64 {
	s := 0.0
	for d := range u {
		s += math.Log(m.l[d].pdf(u[d])) - math.Log(m.g[d].pdf(u[d]))
	}
	return s
}

// candidates draws tpeCandidates points from l and returns them best first.
func (m tpeModel) candidates(r *rand.Rand) [][]float64 {
	points := make([][]float64, tpeCandidates)
	for i := range points {
		u := make([]float64, len(m.l))
		for d := range u {
			u[d] = m.l[d].sample(r)
		}
		points[i] = u
	}
	return m.rank(points)
}

// rank orders points by score, best first (ties: the given order).
func (m tpeModel) rank(points [][]float64) [][]float64 {
	type scored struct {
		u []float64
		s float64
	}
	cs := make([]scored, len(points))
	for i, u := range points {
		cs[i] = scored{u, m.score(u)}
	}
	slices.SortStableFunc(cs, func(a, b scored) int { return cmp.Compare(b.s, a.s) })
	out := make([][]float64, len(cs))
	for i, c := range cs {
		out[i] = c.u
	}
	return out
}
