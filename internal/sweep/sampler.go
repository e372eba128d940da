package sweep

import (
	"fmt"
)

// drawsPerTrial is how many draws a trial gets to find a parameter set not tried yet before a
// finite space is enumerated or an infinite one is declared exhausted.
const drawsPerTrial = 64

// enumerateMax is the largest finite space whose untried sets are enumerated once drawing keeps
// hitting tried ones.
const enumerateMax = 1 << 16

// sampler draws the parameters of new trials.
type sampler struct {
	cfg   Config
	names []string
	tried map[string]bool
	model *tpeModel
}

func newSampler(cfg Config, trials []Trial) *sampler {
	s := &sampler{cfg: cfg, names: cfg.Space.names(), tried: map[string]bool{}}
	for _, t := range trials {
		s.tried[key(t.Params)] = true
	}
	if cfg.Sampling.Type == "bayesian" {
		if obs := observations(cfg, s.names, trials); len(obs) >= tpeStartup {
			m := fitTPE(cfg.Space, s.names, obs)
			s.model = &m
		}
	}
	return s
}

// draw is trial i's parameters, false when no untried set is left to find.
func (s *sampler) draw(i int) (Params, bool) {
	if s.cfg.Sampling.Type == "grid" {
		return s.take(s.cfg.Space.gridParams(s.names, i))
	}
	var points [][]float64
	if s.model != nil {
		points = s.model.candidates(trialRand(s.cfg.Sampling.Seed, uint64(i)))
	}
	points = append(points, randomCandidates(s.cfg, s.names, i, drawsPerTrial)...)
	for _, u := range points {
		if p, ok := s.take(s.cfg.Space.paramsAt(s.names, u)); ok {
			return p, true
		}
	}
	return s.enumerate(i)
}

// take claims p unless it was tried.
func (s *sampler) take(p Params) (Params, bool) {
	k := key(p)
	if s.tried[k] {
		return nil, false
	}
	s.tried[k] = true
	return p, true
}

// enumerate picks, with trial i's randomness, one of a small finite space's untried sets.
func (s *sampler) enumerate(i int) (Params, bool) {
	size := s.cfg.Space.size()
	if size == 0 || size > enumerateMax {
		return nil, false
	}
	var untried []Params
	for j := range size {
		p := s.slotParams(j)
		if !s.tried[key(p)] {
			untried = append(untried, p)
		}
	}
	if len(untried) == 0 {
		return nil, false
	}
	r := trialRand(s.cfg.Sampling.Seed^0x5eed, uint64(i))
	return s.take(untried[r.IntN(len(untried))])
}

// slotParams is set j of a finite space in mixed radix, the last name fastest.
func (s *sampler) slotParams(j int) Params {
	p := make(Params, len(s.names))
	for d := len(s.names) - 1; d >= 0; d-- {
		e := s.cfg.Space[s.names[d]]
		k := e.size()
		p[s.names[d]] = e.at((float64(j%k) + 0.5) / float64(k))
		j /= k
	}
	return p
}

// exhausted is the Reason when draw finds nothing.
func (s *sampler) exhausted() string {
	if size := s.cfg.Space.size(); size > 0 && size <= enumerateMax {
		return fmt.Sprintf("all %d parameter sets of the search space are tried", size)
	}
	return fmt.Sprintf("no untried parameter set in %d draws: the search space is exhausted", drawsPerTrial)
}
