package server

import (
	"bytes"
	"io"
	"testing"
)

// firstReadRecorder is a body that records the size of the buffer its first Read got: where a
// server body takes its share of the memory budget, possibly waiting.
type firstReadRecorder struct {
	r     io.Reader
	first int
	reads int
}

func (f *firstReadRecorder) Read(p []byte) (int, error) {
	if f.reads == 0 {
		f.first = len(p)
	}
	f.reads++
	return f.r.Read(p)
}

// A body's buffer of its declared size is made after its first read, which is where it waits
// for the memory budget: a request waiting there holds 512 bytes, not its 8 MB (issue 27: 20
// such requests waiting held 154 MB besides the budget). The body still arrives whole.
func TestReadBodyWaitsBeforeItsBuffer(t *testing.T) {
	info := bodyInfo{route: "POST /x", limit: batchLimit}
	for _, tc := range []struct {
		name     string
		size     int
		declared int64
	}{{"large, declared", 8_000_000, 8_000_000}, {"large, chunked", 8_000_000, -1}, {"small", 100, 100}, {"empty", 0, 0}} {
		data := bytes.Repeat([]byte("x"), tc.size)
		rec := &firstReadRecorder{r: bytes.NewReader(data)}
		got, err := readBody(rec, tc.declared, info)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s: read %d bytes, want %d", tc.name, len(got), len(data))
		}
		if rec.first > 512 {
			t.Errorf("%s: the first read got a %d-byte buffer, want at most 512", tc.name, rec.first)
		}
	}
}
