package supervisor

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/tick"
)

// capture turns a process's output into whole lines appended to a log file. A line ends at "\n",
// "\r\n" or a lone "\r" (progress bars); a partial line is written out once it is idle for
// flushAfter or longer than maxLine, so that nothing waits forever for a newline.
type capture struct {
	mu         sync.Mutex
	f          *os.File
	pending    []byte
	lastData   time.Time
	lines      int64
	onLine     func()
	flushAfter time.Duration
	maxLine    int
	// afterCR is set when the last byte seen ended a line with "\r", so that a "\n" arriving
	// in the next read completes "\r\n" instead of making an empty line.
	afterCR bool
	// afterPartial is set when a partial line was flushed (idle or too long): a line end arriving
	// next belongs to that line and must not make an empty one.
	afterPartial bool
	// mirror, when set, also receives every line, prefixed (a rank's lines into the run's merged log).
	mirror *capture
	prefix string
	// failed is the first write to the log file that failed (the node's disk is full): the
	// lines after it are lost (dropped counts them), and the run fails with it. rankFailed is
	// the first failed write of a rank's log that mirrors into this one.
	failed, rankFailed error
	dropped            int64
	// red redacts the run's secrets from every line (secretenv.go); nil: none.
	red *redactor
}

func newCapture(path string, onLine func()) (*capture, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &capture{f: f, onLine: onLine, flushAfter: time.Second, maxLine: 64 << 10}, nil
}

// copyFrom reads r until EOF, emitting lines; it flushes idle partial lines while waiting.
func (c *capture) copyFrom(r io.Reader) {
	stop := make(chan struct{})
	go c.flushIdle(stop)
	defer close(stop)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.write(buf[:n])
		}
		if err != nil {
			break
		}
	}
	c.mu.Lock()
	c.flushPartial()
	c.mu.Unlock()
}

// Write adds output written by Hangar itself (environment builds) to the log.
func (c *capture) Write(p []byte) (int, error) {
	c.write(p)
	return len(p), nil
}

func (c *capture) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastData = time.Now()
	if c.afterCR && len(p) > 0 && p[0] == '\n' {
		p = p[1:]
	}
	c.afterCR = false
	if c.afterPartial && len(p) > 0 {
		switch {
		case p[0] == '\n':
			p = p[1:]
		case p[0] == '\r' && len(p) > 1 && p[1] == '\n':
			p = p[2:]
		case p[0] == '\r':
			p = p[1:]
		}
		c.afterPartial = false
	}
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			c.pending = append(c.pending, p...)
			if len(c.pending) >= c.maxLine {
				c.flushEarly()
			}
			return
		}
		c.pending = append(c.pending, p[:i]...)
		c.emit()
		if p[i] == '\r' {
			if i+1 == len(p) {
				c.afterCR = true
			} else if p[i+1] == '\n' {
				i++
			}
		}
		p = p[i+1:]
	}
}

func (c *capture) flushIdle(stop chan struct{}) {
	tick.Every(stop, c.flushAfter/4, func() {
		c.mu.Lock()
		if len(c.pending) > 0 && time.Since(c.lastData) >= c.flushAfter {
			c.flushEarly()
		}
		c.mu.Unlock()
	})
}

func (c *capture) flushPartial() {
	if len(c.pending) > 0 {
		c.emit()
		c.afterPartial = true
	}
}

// emit writes the pending line with its newline in one write, so a reader never sees half a line as whole.
func (c *capture) emit() {
	line := append(c.red.line(c.pending), '\n')
	c.writeFile(line)
	if c.mirror != nil {
		c.mirror.writeLine(c.prefix, line)
	}
	c.pending = c.pending[:0]
	c.lines++
	if c.onLine != nil {
		c.onLine()
	}
}

// close writes out a last partial line and closes the log file. It does not fsync it: the
// lines are shipped to the workspace before the run ends, and finalize copies the file into
// the node's blob cache, which syncs its copy; a sync here cost every run a wait for the disk
// between its command's exit and its end (BENCHMARKS.md, issue 11).
func (c *capture) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushPartial()
	return c.f.Close()
}

// writeLine adds a whole line (ending in a newline) from another capture, with a prefix, in one
// write, so that the lines of several ranks interleave whole.
func (c *capture) writeLine(prefix string, line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeFile(append([]byte(prefix), line...))
	c.lines++
	if c.onLine != nil {
		c.onLine()
	}
}

// writeFile appends b to the log file (c.mu held). After a failed write nothing more is written:
// the file ends where the disk filled, rather than with lines missing in its middle.
func (c *capture) writeFile(b []byte) {
	if c.failed != nil {
		c.dropped++
		return
	}
	if _, err := c.f.Write(b); err != nil {
		c.failed = fileWriteError(c.f.Name(), err)
		c.dropped++
		if c.mirror != nil {
			c.mirror.fail(c.failed) // a rank's log: the run's log tells finalize
		}
	}
}

// fail records a failed write of a rank's log that mirrors into this one.
func (c *capture) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rankFailed == nil {
		c.rankFailed = err
	}
}

// lost returns how many lines of this log were lost, and the first failed write of this log or
// of a rank's (nil if none).
func (c *capture) lost() (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed != nil {
		return c.dropped, c.failed
	}
	return c.dropped, c.rankFailed
}
