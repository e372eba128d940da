package bench

import (
	"math"
	"strings"
	"testing"
)

// TestSimulateSweep: random search runs every trial to the end; successive halving spends less
// for the same trials and seed, and its best-so-far curve never goes up.
func TestSimulateSweep(t *testing.T) {
	o := SweepOptions{Trials: 12, Seeds: 1, Workers: 3, Reports: 9}
	obj := objectives()[0]
	ms := methods()
	rnd, err := simulate(obj, ms[0], 1, o)
	if err != nil {
		t.Fatal(err)
	}
	if rnd.spent != 12*9 || len(rnd.curve) != rnd.spent {
		t.Fatalf("random spent %d reports, curve %d; want %d", rnd.spent, len(rnd.curve), 12*9)
	}
	sh, err := simulate(obj, ms[3], 1, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ms[3].name, "asha") || sh.spent >= rnd.spent {
		t.Fatalf("%s spent %d reports, random %d", ms[3].name, sh.spent, rnd.spent)
	}
	for i := 1; i < len(sh.curve); i++ {
		if sh.curve[i] > sh.curve[i-1] {
			t.Fatalf("best-so-far went up at %d: %v", i, sh.curve)
		}
	}
	if math.IsNaN(rnd.regret) || rnd.regret < 0 {
		t.Errorf("regret %g", rnd.regret)
	}
}
