package sweep

import (
	"math"
	"testing"
)

// TestExprAt maps quantiles to values by hand: Azure's log kinds are exp of the uniform or
// normal draw, the q kinds round(x/q)·q.
func TestExprAt(t *testing.T) {
	phi1 := 0.8413447460685429 // Φ(1)
	tests := []struct {
		name string
		e    Expr
		u    float64
		want any
	}{
		{"choice first", Expr{Kind: "choice", Values: []any{"a", "b", "c"}}, 0, "a"},
		{"choice middle", Expr{Kind: "choice", Values: []any{"a", "b", "c"}}, 0.5, "b"},
		{"choice last", Expr{Kind: "choice", Values: []any{"a", "b", "c"}}, 0.99, "c"},
		{"choice u=1", Expr{Kind: "choice", Values: []any{"a", "b", "c"}}, 1, "c"},
		{"randint", Expr{Kind: "randint", Upper: 5}, 0.5, int64(2)},
		{"randint top", Expr{Kind: "randint", Upper: 5}, 0.999, int64(4)},
		{"uniform", Expr{Kind: "uniform", Low: 2, High: 4}, 0.25, 2.5},
		{"quniform 4.2 → 3", Expr{Kind: "quniform", Low: 0, High: 10, Q: 3}, 0.42, 3.0},
		{"loguniform exp(1)", Expr{Kind: "loguniform", Low: 0, High: 2}, 0.5, math.E},
		{"qloguniform exp(ln 1000/3)=10 → 9", Expr{Kind: "qloguniform", Low: 0, High: math.Log(1000), Q: 3}, 1.0 / 3, 9.0},
		{"normal median", Expr{Kind: "normal", Mu: 1, Sigma: 2}, 0.5, 1.0},
		{"normal one sigma", Expr{Kind: "normal", Mu: 1, Sigma: 2}, phi1, 3.0},
		{"lognormal median", Expr{Kind: "lognormal", Mu: 0, Sigma: 1}, 0.5, 1.0},
		{"lognormal one sigma", Expr{Kind: "lognormal", Mu: 0, Sigma: 1}, phi1, math.E},
		{"qnormal 12 → 10", Expr{Kind: "qnormal", Mu: 10, Sigma: 2, Q: 5}, phi1, 10.0},
		{"qlognormal 10 → 9", Expr{Kind: "qlognormal", Mu: math.Log(10), Sigma: 1, Q: 3}, 0.5, 9.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.e.at(tt.u)
			if f, ok := tt.want.(float64); ok {
				g, isFloat := got.(float64)
				if !isFloat || math.Abs(g-f) > 1e-9 {
					t.Fatalf("at(%g) = %v (%T), want %v", tt.u, got, got, f)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("at(%g) = %v (%T), want %v (%T)", tt.u, got, got, tt.want, tt.want)
			}
		})
	}
}

// TestExprNormalEnds: u of 0 (a draw can be exactly 0) gives a finite value, not minus infinity.
func TestExprNormalEnds(t *testing.T) {
	for _, kind := range []string{"normal", "lognormal", "qnormal", "qlognormal"} {
		for _, u := range []float64{0, 1} {
			v := Expr{Kind: kind, Mu: 0, Sigma: 1, Q: 1}.at(u).(float64)
			if math.IsInf(v, 0) || math.IsNaN(v) {
				t.Errorf("%s at %g = %v", kind, u, v)
			}
		}
	}
}

// TestExprCDFInverts: cdf(at(u)) = u for the continuous kinds, and a choice's or randint's value
// comes back to its slot, also when JSON turned an int64 into a float64.
func TestExprCDFInverts(t *testing.T) {
	exprs := []Expr{
		{Kind: "uniform", Low: -1, High: 3}, {Kind: "loguniform", Low: -6, High: -1},
		{Kind: "normal", Mu: 2, Sigma: 3}, {Kind: "lognormal", Mu: 0, Sigma: 0.5},
	}
	for _, e := range exprs {
		for _, u := range []float64{0.1, 0.5, 0.9} {
			got, ok := e.cdf(e.at(u))
			if !ok || math.Abs(got-u) > 1e-9 {
				t.Errorf("%s: cdf(at(%g)) = %g, %v", e.Kind, u, got, ok)
			}
		}
	}
	c := Expr{Kind: "choice", Values: []any{int64(1), int64(2), int64(4)}}
	if u, ok := c.cdf(float64(4)); !ok || index(u, 3) != 2 {
		t.Errorf("choice: cdf(4.0) = %g, %v; want slot 2", u, ok)
	}
	if _, ok := c.cdf("4"); ok {
		t.Error(`choice: cdf("4") found the number 4`)
	}
	r := Expr{Kind: "randint", Upper: 4}
	if u, _ := r.cdf(float64(3)); r.at(u) != int64(3) {
		t.Errorf("randint: at(cdf(3.0)) = %v", r.at(u))
	}
}

func TestSpaceSize(t *testing.T) {
	tests := []struct {
		name string
		s    Space
		want int
	}{
		{"choices and randint", Space{"a": {Kind: "choice", Values: []any{1, 2, 3}}, "b": {Kind: "randint", Upper: 4}}, 12},
		{"a continuous one", Space{"a": {Kind: "choice", Values: []any{1}}, "b": {Kind: "uniform", High: 1}}, 0},
		{"saturates", Space{"a": {Kind: "randint", Upper: 1 << 30}, "b": {Kind: "randint", Upper: 1 << 30}}, maxCount},
	}
	for _, tt := range tests {
		if got := tt.s.size(); got != tt.want {
			t.Errorf("%s: size = %d, want %d", tt.name, got, tt.want)
		}
	}
}
