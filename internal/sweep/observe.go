package sweep

// observations are what the bayesian sampler learns from, as points of the unit cube with
// scores. Without asha: every ended trial (completed, or canceled: stopped early or by the user)
// that reported, by its last report, as Best judges it. With asha (Hangar's model-based
// successive halving, like BOHB): the trials at the highest level, rung or max_resource, that
// tpeStartup trials have reached, by their value at that level's report, running ones included.
func observations(cfg Config, names []string, trials []Trial) []observation {
	g := goalOf(cfg.Objective)
	if t := cfg.Termination; t != nil && t.Type == "asha" {
		a := t.asha()
		levels := rungs(a)
		if a.MaxResource > 0 {
			levels = append(levels, a.MaxResource)
		}
		for k := len(levels) - 1; k >= 0; k-- {
			r := levels[k]
			obs := observe(cfg.Space, names, g, trials, func(t Trial) (float64, bool) {
				if len(t.Metrics) < r {
					return 0, false
				}
				return t.Metrics[r-1].Value, true
			})
			if len(obs) >= tpeStartup {
				return obs
			}
		}
		return nil
	}
	return observe(cfg.Space, names, g, trials, func(t Trial) (float64, bool) {
		if (t.State != Completed && t.State != Canceled) || len(t.Metrics) == 0 {
			return 0, false
		}
		return t.Metrics[len(t.Metrics)-1].Value, true
	})
}

func observe(s Space, names []string, g goal, trials []Trial, value func(Trial) (float64, bool)) []observation {
	var obs []observation
	for _, t := range trials {
		v, ok := value(t)
		if !ok {
			continue
		}
		u, ok := s.unit(names, t.Params)
		if !ok {
			continue
		}
		obs = append(obs, observation{u: u, score: g.score(v), index: t.Index})
	}
	return obs
}

// unit places parameters in the unit cube; false when one is missing or not of the space
// (a trial from before the space was edited, say).
func (s Space) unit(names []string, p Params) ([]float64, bool) {
	u := make([]float64, len(names))
	for d, name := range names {
		v, ok := p[name]
		if !ok {
			return nil, false
		}
		if u[d], ok = s[name].cdf(v); !ok {
			return nil, false
		}
	}
	return u, true
}
