package supervisor

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newTestCapture opens a capture on a fresh log file; the returned counter counts onLine calls.
func newTestCapture(t testing.TB) (c *capture, path string, onLines *int) {
	t.Helper()
	path = filepath.Join(t.TempDir(), StdLogFile)
	n := new(int)
	c, err := newCapture(path, func() { *n++ })
	if err != nil {
		t.Fatal(err)
	}
	return c, path, n
}

// fileLines returns the file's lines; every line must end with "\n".
func fileLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if s == "" {
		return nil
	}
	if !strings.HasSuffix(s, "\n") {
		t.Fatalf("log file ends with a partial line: %q", s)
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestCaptureSplitsLines(t *testing.T) {
	tests := []struct {
		name  string
		reads []string
		want  []string
	}{
		{"newlines", []string{"a\nb\n"}, []string{"a", "b"}},
		{"crlf", []string{"a\r\nb\r\n"}, []string{"a", "b"}},
		{"lone cr", []string{"10%\r20%\r"}, []string{"10%", "20%"}},
		{"mixed", []string{"a\r\nb\rc\nd\n"}, []string{"a", "b", "c", "d"}},
		{"empty lines kept", []string{"a\n\nb\n"}, []string{"a", "", "b"}},
		{"line split across reads", []string{"hel", "lo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"cr then lf in the next read is one line", []string{"a\r", "\nb\n"}, []string{"a", "b"}},
		{"cr then text in the next read", []string{"a\r", "b\n"}, []string{"a", "b"}},
		{"cr lf split, then more cr lf", []string{"a\r", "\n", "b\r", "\n"}, []string{"a", "b"}},
		{"partial line flushed by close", []string{"a\nno newline"}, []string{"a", "no newline"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, path, n := newTestCapture(t)
			for _, r := range tt.reads {
				c.write([]byte(r))
			}
			if err := c.close(); err != nil {
				t.Fatal(err)
			}
			got := fileLines(t, path)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if *n != len(tt.want) || c.lines != int64(len(tt.want)) {
				t.Errorf("onLine called %d times, lines = %d; want %d", *n, c.lines, len(tt.want))
			}
		})
	}
}

func TestCaptureFlushesLongPartialLine(t *testing.T) {
	c, path, _ := newTestCapture(t)
	c.maxLine = 8
	c.write([]byte("0123"))
	if got := fileLines(t, path); got != nil {
		t.Fatalf("a short partial line was written early: %q", got)
	}
	c.write([]byte("456789")) // now 10 bytes pending, over maxLine
	if diff := cmp.Diff([]string{"0123456789"}, fileLines(t, path)); diff != "" {
		t.Fatalf("after passing maxLine (-want +got):\n%s", diff)
	}
	c.write([]byte("next\n"))
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"0123456789", "next"}, fileLines(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The idle flush is a ticker loop: in a synctest bubble its clock moves only when every goroutine
// waits, so the test says exactly when the partial line reaches the file, without sleeping.
func TestCaptureFlushesIdlePartialLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, path, _ := newTestCapture(t)
		pr, pw := io.Pipe()
		done := make(chan struct{})
		go func() { c.copyFrom(pr); close(done) }()

		if _, err := pw.Write([]byte("first\nDownloading... ")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(c.flushAfter / 2)
		synctest.Wait()
		if b, _ := os.ReadFile(path); string(b) != "first\n" {
			t.Fatalf("log %q before flushAfter, want the whole line only", b)
		}
		// The partial line reaches the file although no newline follows and the pipe stays open.
		time.Sleep(c.flushAfter)
		synctest.Wait()
		if b, _ := os.ReadFile(path); string(b) != "first\nDownloading... \n" {
			t.Fatalf("log %q after flushAfter, want the idle partial line too", b)
		}
		if _, err := pw.Write([]byte("done\ntail")); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		<-done // copyFrom flushes what is pending at EOF
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
		want := []string{"first", "Downloading... ", "done", "tail"}
		if diff := cmp.Diff(want, fileLines(t, path)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestCaptureNoEmptyLineAfterForcedFlush(t *testing.T) {
	c, path, _ := newTestCapture(t)
	c.maxLine = 4
	c.write([]byte("abcd")) // flushed: reached maxLine
	c.write([]byte("\nef\n"))
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"abcd", "ef"}, fileLines(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCaptureCloseFlushes(t *testing.T) {
	c, path, n := newTestCapture(t)
	c.write([]byte("a\r")) // a lone \r at the very end still ends the line
	c.write([]byte("partial"))
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "partial"}, fileLines(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if *n != 2 {
		t.Errorf("onLine called %d times, want 2", *n)
	}
}

func TestCaptureAppends(t *testing.T) {
	c, path, _ := newTestCapture(t)
	c.write([]byte("one\n"))
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	c2, err := newCapture(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c2.write([]byte("two\n"))
	if err := c2.close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"one", "two"}, fileLines(t, path)); diff != "" {
		t.Errorf("a reopened capture must append (-want +got):\n%s", diff)
	}
}
