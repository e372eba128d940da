package store

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM runs WHERE id = ? AND status IN (?, ?)`, `SELECT * FROM runs WHERE id = $1 AND status IN ($2, $3)`},
		{`SELECT '?', ? FROM t`, `SELECT '?', $1 FROM t`},
		{`SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`},
		{`SELECT "odd?name" FROM t WHERE a = ?`, `SELECT "odd?name" FROM t WHERE a = $1`},
		{"SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{`SELECT /* a ? here */ ?`, `SELECT /* a ? here */ $1`},
		{`UPDATE t SET f = ? || '/' || f WHERE f NOT LIKE 'a\_%' ESCAPE '\' AND id = ?`,
			`UPDATE t SET f = $1 || '/' || f WHERE f NOT LIKE 'a\_%' ESCAPE '\' AND id = $2`},
		{`SELECT 'unclosed ?`, `SELECT 'unclosed ?`},
		{`SELECT ?-- ?`, `SELECT $1-- ?`},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
