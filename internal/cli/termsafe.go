package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// A run's output is text its code wrote, and a terminal obeys the control sequences in it:
// ESC [ ... moves the cursor and rewrites what was shown, OSC 52 writes the clipboard, others
// set the window title or answer back on the terminal's input. Verbs that print a run's
// output (job stream and logs, job create --stream, compute logs, online-deployment get-logs)
// show those bytes escaped when stdout is a terminal (termSafe); --raw prints them as they
// are, and a pipe or a file always gets the exact bytes.

// termSafe returns s with what a terminal would act on written visibly: control characters
// other than tab and newline as \xNN (ESC as \x1b), C1 controls and the bidirectional
// overrides that reorder what is shown as \uNNNN, and bytes that are not UTF-8 as \xNN.
// Printable text, UTF-8 included, is kept.
func termSafe(s string) string {
	if plainUTF8(s) { // most lines
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 && r != '\t' && r != '\n', r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, isBidiControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// plainUTF8 reports whether s is valid UTF-8 without controls other than tab and newline.
func plainUTF8(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r <= 0x9f || isBidiControl(r) {
			return false
		}
	}
	return true
}

// isBidiControl reports the embedding, override and isolate controls, which make a terminal
// show text in another order than it was written.
func isBidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// runOutput prints a run's output lines to w: escaped for a terminal (termSafe) when w is one
// and raw is false, else byte for byte.
type runOutput struct {
	w    io.Writer
	safe bool
}

func newRunOutput(w io.Writer, raw bool) runOutput {
	return runOutput{w: w, safe: !raw && isTerminal(w)}
}

// text is s as it will be printed.
func (o runOutput) text(s string) string {
	if o.safe {
		return termSafe(s)
	}
	return s
}

// line prints s and a newline.
func (o runOutput) line(s string) {
	fmt.Fprintln(o.w, o.text(s))
}

// addRawFlag adds --raw to a verb that prints a run's output.
func addRawFlag(cmd *cobra.Command, dst *bool) {
	cmd.Flags().BoolVar(dst, "raw", false, "print the run's output byte for byte, terminal escape sequences included (on a terminal they are shown escaped, as \\x1b[...)")
}

// safeWriter writes what termSafe makes of the text written to it. Tables go through one on a
// terminal: their cells hold what runs and users set (tags, params, display names, metric
// names), which may carry escape sequences too. A UTF-8 sequence split across writes is held
// until it is whole, or until flush.
type safeWriter struct {
	w       io.Writer
	pending []byte
}

func (s *safeWriter) Write(p []byte) (int, error) {
	buf := append(s.pending, p...)
	cut := len(buf) - partialRune(buf)
	s.pending = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(s.w, termSafe(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes what is held (an incomplete sequence, escaped).
func (s *safeWriter) flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(s.w, termSafe(string(s.pending)))
	s.pending = nil
	return err
}

// partialRune is the length of the incomplete UTF-8 sequence that ends b (0 if none).
func partialRune(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // the sequence's first byte
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

// tableOut is where a table is written: stdout, through a safeWriter when it is a terminal.
// The caller flushes it.
func (e *Env) tableOut() (io.Writer, func() error) {
	if !isTerminal(e.Stdout) {
		return e.Stdout, func() error { return nil }
	}
	sw := &safeWriter{w: e.Stdout}
	return sw, sw.flush
}
