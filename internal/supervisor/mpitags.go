package supervisor

import (
	"bytes"
	"io"
	"maps"
	"regexp"
	"slices"
)

// mpiTag is Open MPI's --tag-output prefix: [jobid,rank]<stdout>: or <stderr>:. mpirun puts it
// before every chunk a rank wrote, and a chunk need not end a line (Python writes a print's text
// and its newline apart), so chunks of two ranks interleave within lines:
//
//	[1,0]<stdout>:rank 0 says[1,1]<stdout>:rank 1 says\n[1,0]<stdout>:\n
var mpiTag = regexp.MustCompile(`\[\d+,(\d+)\]<std(?:out|err)>:`)

// maxTag bounds how much of a stream's end is held back as a possibly cut tag.
const maxTag = 48

// retag rewrites Open MPI's tagged output into whole lines with Hangar's "[rank N] " prefix as
// the output streams: each rank's chunks are gathered into its own lines.
func retag(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(untag(r, pw)) }()
	return pr
}

// untagger splits a tagged stream by rank and writes each rank's complete lines.
type untagger struct {
	w       io.Writer
	rank    string            // the rank the current chunk belongs to ("": mpirun's own output)
	partial map[string][]byte // each rank's line so far
}

func untag(r io.Reader, w io.Writer) error {
	u := &untagger{w: w, partial: map[string][]byte{}}
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		keep := 0
		if err == nil {
			keep = cutTagTail(buf)
		}
		if werr := u.feed(buf[:len(buf)-keep]); werr != nil {
			return werr
		}
		buf = append(buf[:0], buf[len(buf)-keep:]...)
		if err != nil {
			if ferr := u.flush(); ferr != nil {
				return ferr
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// cutTagTail is how many bytes at the end of b may be the start of a tag the next read completes.
func cutTagTail(b []byte) int {
	i := bytes.LastIndexByte(b, '[')
	if i < 0 || len(b)-i > maxTag || bytes.IndexByte(b[i:], ':') >= 0 {
		return 0
	}
	return len(b) - i
}

// feed splits b at tags and gives each piece to its rank.
func (u *untagger) feed(b []byte) error {
	for len(b) > 0 {
		m := mpiTag.FindSubmatchIndex(b)
		if m == nil {
			return u.add(b)
		}
		if err := u.add(b[:m[0]]); err != nil {
			return err
		}
		u.rank = string(b[m[2]:m[3]])
		b = b[m[1]:]
	}
	return nil
}

// add appends text to the current rank's line and writes the lines it completes.
func (u *untagger) add(text []byte) error {
	line := append(u.partial[u.rank], text...)
	for {
		i := bytes.IndexByte(line, '\n')
		if i < 0 {
			break
		}
		if err := u.emit(u.rank, line[:i+1]); err != nil {
			return err
		}
		line = line[i+1:]
	}
	u.partial[u.rank] = append([]byte(nil), line...)
	return nil
}

func (u *untagger) emit(rank string, line []byte) error {
	if rank != "" {
		line = append([]byte("[rank "+rank+"] "), line...)
	}
	_, err := u.w.Write(line)
	return err
}

// flush writes what is left of each rank's line at the end of the stream.
func (u *untagger) flush() error {
	for _, rank := range slices.Sorted(maps.Keys(u.partial)) {
		if line := u.partial[rank]; len(line) > 0 {
			if err := u.emit(rank, append(line, '\n')); err != nil {
				return err
			}
		}
	}
	return nil
}
