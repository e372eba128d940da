package tokens

import "testing"

func TestPersonalTokens(t *testing.T) {
	a, b := NewPersonal(), NewPersonal()
	if a == b || !IsPersonal(a) || len(a) != len(PersonalPrefix)+64 {
		t.Fatalf("tokens %q, %q", a, b)
	}
	for _, tok := range []string{"", "hpt_", "hpt_abc", "run.1.2.mac", "ha1.node.mac", a[4:]} {
		if IsPersonal(tok) {
			t.Errorf("IsPersonal(%q) = true", tok)
		}
	}
	if PersonalHash(a) == PersonalHash(b) || len(PersonalHash(a)) != 64 {
		t.Errorf("hashes %s, %s", PersonalHash(a), PersonalHash(b))
	}
}
