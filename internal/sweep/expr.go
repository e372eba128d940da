package sweep

import (
	"math"
)

// Every sampler draws a point u in [0,1)^d and maps coordinate u through the expression's
// inverse CDF (at): random sampling feeds it uniform draws, sobol its low-discrepancy points and
// the bayesian sampler its candidates, so all three honour the same distributions. cdf is the
// way back, used to place stored values in the unit cube for the bayesian model.

// tiny keeps u away from 0 and 1, where the normal kinds' inverse CDF is infinite.
const tiny = 1e-12

// at is the value of e at quantile u.
func (e Expr) at(u float64) any {
	u = math.Min(math.Max(u, 0), 1-tiny)
	switch e.Kind {
	case "choice":
		return e.Values[index(u, len(e.Values))]
	case "randint":
		return int64(index(u, int(e.Upper)))
	}
	var x float64
	switch e.Kind {
	case "uniform", "quniform", "loguniform", "qloguniform":
		x = e.Low + u*(e.High-e.Low)
	case "normal", "qnormal", "lognormal", "qlognormal":
		x = e.Mu + e.Sigma*normalQuantile(math.Max(u, tiny))
	}
	if e.isLog() {
		x = math.Exp(x)
	}
	if e.Q > 0 && e.isQ() {
		x = math.Round(x/e.Q) * e.Q
	}
	return x
}

// cdf is the quantile of value v under e, in [0,1]; for a choice it is the middle of the
// value's slot and ok is false when v is not one of the values.
func (e Expr) cdf(v any) (u float64, ok bool) {
	switch e.Kind {
	case "choice":
		i := e.choiceIndex(v)
		if i < 0 {
			return 0, false
		}
		return (float64(i) + 0.5) / float64(len(e.Values)), true
	}
	x, ok := number(v)
	if !ok {
		return 0, false
	}
	switch e.Kind {
	case "randint":
		return clamp01((x + 0.5) / float64(e.Upper)), true
	}
	if e.isLog() {
		if x <= 0 {
			return 0, true
		}
		x = math.Log(x)
	}
	switch e.Kind {
	case "uniform", "quniform", "loguniform", "qloguniform":
		if e.High == e.Low {
			return 0.5, true
		}
		return clamp01((x - e.Low) / (e.High - e.Low)), true
	default:
		return normalCDF((x - e.Mu) / e.Sigma), true
	}
}

func (e Expr) choiceIndex(v any) int {
	k := valueKey(v)
	for i, c := range e.Values {
		if valueKey(c) == k {
			return i
		}
	}
	return -1
}

func (e Expr) isLog() bool {
	switch e.Kind {
	case "loguniform", "qloguniform", "lognormal", "qlognormal":
		return true
	}
	return false
}

func (e Expr) isQ() bool {
	switch e.Kind {
	case "quniform", "qloguniform", "qnormal", "qlognormal":
		return true
	}
	return false
}

// categorical says whether the bayesian model treats e as unordered options.
func (e Expr) categorical() bool { return e.Kind == "choice" }

// size is how many values e can take, 0 when they are not finitely many (or not counted: the
// q kinds of a bounded range are finite, but drawing them until they run out is left to the
// duplicate check).
func (e Expr) size() int {
	switch e.Kind {
	case "choice":
		return len(e.Values)
	case "randint":
		return int(e.Upper)
	}
	return 0
}

// index is the slot of u among n equal slots.
func index(u float64, n int) int {
	return min(int(u*float64(n)), n-1)
}

func clamp01(x float64) float64 { return math.Min(math.Max(x, 0), 1) }

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normalQuantile(u float64) float64 { return math.Sqrt2 * math.Erfinv(2*u-1) }

// spaceSize is how many parameter sets the space holds, 0 when not finitely many; it saturates
// at maxCount.
func (s Space) size() int {
	n := 1
	for _, e := range s {
		k := e.size()
		if k == 0 {
			return 0
		}
		if k >= maxCount/n {
			return maxCount
		}
		n *= k
	}
	return n
}

// maxCount caps counted spaces so that the product of a few large choices cannot overflow.
const maxCount = 1 << 40
