package supervisor

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// tail reads whole lines appended to a file, remembering where it is; a line without its
// newline yet is left for the next read.
type tail struct {
	path   string
	offset int64 // byte offset of the first line not yet acknowledged
	seq    int64 // sequence number of the last acknowledged line
}

type tailLine struct {
	seq  int64
	text string
	end  int64 // byte offset just past the line
}

// read returns up to max lines (and at most maxBytes) starting at the acknowledged offset.
// With final set, a last line without its newline counts too (the writer is done).
func (t *tail) read(max int, maxBytes int, final bool) ([]tailLine, error) {
	f, err := os.Open(t.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var out []tailLine
	off, seq, size := t.offset, t.seq, 0
	for len(out) < max {
		b, err := r.ReadBytes('\n')
		if err != nil && !(final && err == io.EOF && len(b) > 0) {
			break // EOF or a partial line: wait for more
		}
		if len(out) > 0 && size+len(b) > maxBytes {
			break // the next read starts with this line
		}
		off += int64(len(b))
		seq++
		size += len(b)
		out = append(out, tailLine{seq: seq, text: string(bytes.TrimRight(b, "\r\n")), end: off})
	}
	return out, nil
}

// ack moves past the lines up to and including seq.
func (t *tail) ack(lines []tailLine, seq int64) {
	for _, l := range lines {
		if l.seq <= seq {
			t.offset, t.seq = l.end, l.seq
		}
	}
}

// rewind goes back to just after line seq (0: the start of the file), to read lines again.
func (t *tail) rewind(seq int64) error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var off, n int64
	for n < max(seq, 0) {
		b, err := r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("rewind to line %d: the file has %d whole lines: %w", seq, n, err)
		}
		off += int64(len(b))
		n++
	}
	t.offset, t.seq = off, n
	return nil
}
