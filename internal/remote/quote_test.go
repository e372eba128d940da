package remote

import (
	"os/exec"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"abc", "abc"},
		{"/usr/bin/x-1.2_3", "/usr/bin/x-1.2_3"},
		{"a b", "'a b'"},
		{"it's", `'it'"'"'s'`},
		{"$HOME", "'$HOME'"},
		{"~/x", "'~/x'"},
		{"=cmd", "'=cmd'"},
		{"a=b", "'a=b'"},
		{"`id`", "'`id`'"},
		{"x;rm -rf /", "'x;rm -rf /'"},
		{"line\nbreak", "'line\nbreak'"},
		{`back\slash`, `'back\slash'`},
		{"*", "'*'"},
		{"'", `''"'"''`},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got, want := Join("echo", "a b", "c"), "echo 'a b' c"; got != want {
		t.Errorf("Join = %s, want %s", got, want)
	}
}

// TestQuoteShells checks with real shells that every quoted argument arrives unchanged.
func TestQuoteShells(t *testing.T) {
	var args []string
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[^\x00]{0,20}`).Draw(t, "s")
		b := rapid.SliceOfN(rapid.ByteRange(1, 255), 0, 12).Draw(t, "bytes")
		args = append(args, s, string(b))
	})
	args = append(args, "", "'", `"`, "\\", "$(id)", "a\nb", "~", "=x", "!x", "{a,b}", "-n", "*")
	for _, shell := range []string{"/bin/sh", "bash", "dash", "zsh"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			continue
		}
		t.Run(shell, func(t *testing.T) {
			out, err := exec.Command(path, "-c", "printf '%s\\0' "+Join(args...)).Output()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if len(got) != len(args) {
				t.Fatalf("%d arguments arrived, want %d", len(got), len(args))
			}
			for i := range args {
				if got[i] != args[i] {
					t.Errorf("argument %d: got %q, want %q (quoted %s)", i, got[i], args[i], Quote(args[i]))
				}
			}
		})
	}
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a b", "it's", "$x", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			t.Skip("shell arguments cannot hold NUL")
		}
		out, err := exec.Command("/bin/sh", "-c", "printf '%s' "+Quote(s)).Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != s {
			t.Errorf("Quote(%q) = %s arrived as %q", s, Quote(s), out)
		}
	})
}
