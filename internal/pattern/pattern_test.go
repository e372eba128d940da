package pattern

import (
	"slices"
	"testing"
)

func TestRegexp(t *testing.T) {
	p := New(`^([a-z]+)-(\d{1,3})$`)
	for _, c := range []struct {
		in    string
		match bool
		sub   []string
	}{
		{"abc-12", true, []string{"abc-12", "abc", "12"}},
		{"abc-1234", false, nil},
		{"ABC-1", false, nil},
	} {
		if got := p.MatchString(c.in); got != c.match {
			t.Errorf("MatchString(%q) = %v, want %v", c.in, got, c.match)
		}
		if got := p.FindStringSubmatch(c.in); !slices.Equal(got, c.sub) {
			t.Errorf("FindStringSubmatch(%q) = %q, want %q", c.in, got, c.sub)
		}
	}
	all := New(`x(\d)`).FindAllStringSubmatch("x1 x2", -1)
	if len(all) != 2 || all[1][1] != "2" {
		t.Errorf("FindAllStringSubmatch = %q", all)
	}
	if s := p.String(); s != `^([a-z]+)-(\d{1,3})$` {
		t.Errorf("String() = %q", s)
	}
}

func TestBadPatternPanicsOnFirstUse(t *testing.T) {
	p := New(`(`) // no panic yet: nothing compiled
	defer func() {
		if recover() == nil {
			t.Error("a bad pattern did not panic on first use")
		}
	}()
	p.MatchString("x")
}
