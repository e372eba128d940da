package supervisor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeLog writes content to a fresh file and returns its path.
func writeLog(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log.txt")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func appendLog(t testing.TB, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

var tailCmp = cmp.AllowUnexported(tailLine{})

func TestTailRead(t *testing.T) {
	const content = "one\ntwo\r\nthree\npart"
	tests := []struct {
		name     string
		max      int
		maxBytes int
		final    bool
		want     []tailLine
	}{
		{
			name: "whole lines only", max: 100, maxBytes: 1 << 20,
			want: []tailLine{{1, "one", 4}, {2, "two", 9}, {3, "three", 15}},
		},
		{
			name: "final includes the trailing partial line", max: 100, maxBytes: 1 << 20, final: true,
			want: []tailLine{{1, "one", 4}, {2, "two", 9}, {3, "three", 15}, {4, "part", 19}},
		},
		{
			name: "max lines", max: 2, maxBytes: 1 << 20, final: true,
			want: []tailLine{{1, "one", 4}, {2, "two", 9}},
		},
		{
			name: "stops once maxBytes is reached", max: 100, maxBytes: 9,
			want: []tailLine{{1, "one", 4}, {2, "two", 9}},
		},
		{
			name: "a line longer than maxBytes still comes out alone", max: 100, maxBytes: 1,
			want: []tailLine{{1, "one", 4}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &tail{path: writeLog(t, content)}
			got, err := tl.read(tt.max, tt.maxBytes, tt.final)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, tailCmp); diff != "" {
				t.Errorf("read (-want +got):\n%s", diff)
			}
			if tl.offset != 0 || tl.seq != 0 {
				t.Errorf("read moved the tail to offset %d seq %d; only ack may", tl.offset, tl.seq)
			}
		})
	}
}

func TestTailReadStaysUnderMaxBytes(t *testing.T) {
	tl := &tail{path: writeLog(t, "one\ntwo\nthree\n")}
	got, err := tl.read(100, 6, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]tailLine{{1, "one", 4}}, got, tailCmp); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
}

func TestTailMissingFile(t *testing.T) {
	tl := &tail{path: filepath.Join(t.TempDir(), "not-yet")}
	got, err := tl.read(10, 1<<20, true)
	if err != nil || got != nil {
		t.Errorf("read of a missing file = %v, %v; want nothing and no error", got, err)
	}
}

func TestTailAck(t *testing.T) {
	tl := &tail{path: writeLog(t, "a\nb\nc\nd\n")}
	lines, err := tl.read(100, 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	tl.ack(lines, 0)
	if tl.offset != 0 || tl.seq != 0 {
		t.Fatalf("ack(0) moved the tail to offset %d seq %d", tl.offset, tl.seq)
	}
	tl.ack(lines, 2)
	if tl.offset != 4 || tl.seq != 2 {
		t.Fatalf("ack(2): offset %d seq %d, want 4 and 2", tl.offset, tl.seq)
	}
	// The next read starts after the acknowledged lines and numbers on from there.
	lines, err = tl.read(100, 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]tailLine{{3, "c", 6}, {4, "d", 8}}, lines, tailCmp); diff != "" {
		t.Fatalf("read after ack (-want +got):\n%s", diff)
	}
	tl.ack(lines, 99) // more than was read: only up to the last line read
	if tl.offset != 8 || tl.seq != 4 {
		t.Fatalf("ack(99): offset %d seq %d, want 8 and 4", tl.offset, tl.seq)
	}
}

func TestTailPartialLineCompletedLater(t *testing.T) {
	path := writeLog(t, "a\nhal")
	tl := &tail{path: path}
	lines, err := tl.read(100, 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	tl.ack(lines, lines[len(lines)-1].seq)
	appendLog(t, path, "f\n")
	lines, err = tl.read(100, 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]tailLine{{2, "half", 7}}, lines, tailCmp); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTailRewind(t *testing.T) {
	path := writeLog(t, "a\nbb\nccc\npartial")
	tl := &tail{path: path}
	lines, err := tl.read(10, 1<<20, false)
	if err != nil || len(lines) != 3 {
		t.Fatalf("read = %v, %v", lines, err)
	}
	tl.ack(lines, 3)
	if err := tl.rewind(1); err != nil {
		t.Fatal(err)
	}
	if tl.seq != 1 || tl.offset != 2 {
		t.Errorf("after rewind(1): seq %d offset %d, want 1 and 2", tl.seq, tl.offset)
	}
	again, err := tl.read(10, 1<<20, false)
	if err != nil || len(again) != 2 || again[0].text != "bb" || again[0].seq != 2 {
		t.Errorf("read after rewind = %+v, %v; want bb (seq 2) and ccc", again, err)
	}
	if err := tl.rewind(0); err != nil || tl.seq != 0 || tl.offset != 0 {
		t.Errorf("rewind(0): seq %d offset %d, %v", tl.seq, tl.offset, err)
	}
	if err := tl.rewind(4); err == nil {
		t.Error("rewind past the whole lines succeeded")
	}
}
