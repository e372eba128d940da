package cli

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/creack/pty"
)

// What a terminal would act on is shown escaped; text, UTF-8 included, tabs and newlines stay.
func TestTermSafe(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "epoch 1 loss=0.25", "epoch 1 loss=0.25"},
		{"utf-8 and tabs", "précision\t✓ 精度 🚀\nnext", "précision\t✓ 精度 🚀\nnext"},
		{"colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"clipboard write (OSC 52)", "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07", `\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07`},
		{"title, ST-terminated", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
		{"clear screen and home", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"carriage return hides text", "rm -rf /\rsafe", `rm -rf /\x0dsafe`},
		{"backspace", "ab\bc", `ab\x08c`},
		{"bell and NUL", "a\x07\x00b", `a\x07\x00b`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"8-bit CSI (C1)", "a\u009b31mb", `a\u009b31mb`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`},
		{"isolate", "x\u2066y\u2069", `x\u2066y\u2069`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"replacement character kept", "a\ufffdb", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := termSafe(tt.in); got != tt.want {
				t.Errorf("termSafe(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A run's output is escaped on a terminal, kept with --raw, and byte for byte through a pipe.
func TestRunOutputOnlyEscapesForATerminal(t *testing.T) {
	const line = "\x1b]52;c;aGk=\x07\x1b[31mred"
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	tests := []struct {
		name string
		w    io.Writer
		raw  bool
		want string
	}{
		{"terminal", tty, false, `\x1b]52;c;aGk=\x07\x1b[31mred`},
		{"terminal, --raw", tty, true, line},
		{"pipe or file", &bytes.Buffer{}, false, line},
	}
	for _, tt := range tests {
		if got := newRunOutput(tt.w, tt.raw).text(line); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	newRunOutput(f, false).line(line)
	if b, _ := os.ReadFile(f.Name()); string(b) != line+"\n" {
		t.Errorf("a file got %q, want the exact bytes", b)
	}
}

// A table on a terminal shows what runs and users set (tags, names) escaped, a rune split
// across writes intact; JSON and YAML escape control characters themselves.
func TestTablesAreEscapedOnATerminal(t *testing.T) {
	var b bytes.Buffer
	sw := &safeWriter{w: &b}
	for _, part := range []string{"tag=\x1b]0;x\x07 ", "pr\xc3", "\xa9cision \xe2\x9c", "\x93", "\xe2"} {
		if _, err := sw.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.flush(); err != nil {
		t.Fatal(err)
	}
	if want := `tag=\x1b]0;x\x07 précision ✓\xe2`; b.String() != want {
		t.Errorf("safeWriter wrote %q, want %q", b.String(), want)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	w, flush := (&Env{Stdout: tty}).tableOut()
	if _, ok := w.(*safeWriter); !ok || flush() != nil {
		t.Errorf("tableOut on a terminal = %T, want a safeWriter", w)
	}
	if w, _ := (&Env{Stdout: &b}).tableOut(); w != io.Writer(&b) {
		t.Errorf("tableOut on a buffer = %T, want the buffer itself", w)
	}
	for _, format := range []string{"json", "yaml"} {
		var out bytes.Buffer
		e := &Env{Stdout: &out, Output: format}
		if err := e.printData(map[string]string{"tag": "\x1b[2Jx"}, nil); err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsRune(out.Bytes(), 0x1b) {
			t.Errorf("-o %s wrote a raw ESC: %q", format, out.String())
		}
	}
}
