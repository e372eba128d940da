package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
)

// Request bodies: every route has a limit (a body over it gets 413 with a message naming the
// limit, before it is read when its length is declared), a deadline, and a share of one memory
// budget.
//
// Uploads (a blob, a bundle of blobs) stream to disk through a fixed buffer: their limits are
// large and their memory does not grow with them. JSON bodies are read whole, then decoded:
// their limits are sized for what clients really send, with a cap on the number of values as
// well, because decoding costs memory per value (`[{},{},…]` into a slice of structs takes
// twenty times its bytes).
const (
	// MaxBlobBytes is the largest blob one PUT may upload.
	MaxBlobBytes int64 = 64 << 30
	// maxBundleBytes bounds a bundle; clients send at most 16 MiB of blobs under at most 4000
	// tar headers (about 20 MiB).
	maxBundleBytes int64 = 64 << 20
	// maxListBytes bounds the long lists: a missing-blob question (the CLI asks 5000 hashes,
	// 335 KB, at a time; the 100,000 hashes of a big tree asked at once are 6.7 MB), a log batch
	// (at most 2000 lines and 1 MiB of text, up to 6 MiB once JSON escapes control bytes), a
	// metric batch (2000 lines).
	maxListBytes int64 = 8 << 20
	// maxJSONBytes bounds every other body: a job with its spec, a status report, a heartbeat
	// are a few KB.
	maxJSONBytes int64 = 1 << 20

	// BodyMemoryBudget is the memory that the request bodies being read may hold together. A
	// request reserves its body's worst case before reading it and waits (up to budgetWait,
	// then 503) while others hold the budget, so however many requests come at once, bodies
	// hold at most this much (the Go heap can grow to twice what is live before it collects).
	BodyMemoryBudget int64 = 64 << 20
	budgetWait             = 30 * time.Second
	// streamCost is an upload's reservation: its copy buffer (256 KiB) and the tar reader.
	streamCost int64 = 512 << 10

	// defaultBodyTimeout is how long a JSON body may take to arrive, and a streamed one stall.
	defaultBodyTimeout = time.Minute
)

// bodyLimit is what a route accepts as its body.
type bodyLimit struct {
	bytes int64
	// values caps the JSON values (array elements, object members) of a JSON body, and perValue
	// is what decoding one may cost at most (the element of a slice of structs, with growth).
	values   int
	perValue int64
	stream   bool // written to disk as it arrives
}

var (
	jsonLimit = bodyLimit{bytes: maxJSONBytes, values: 16 << 10, perValue: 128}
	// A log batch is 4 values a line, a metric batch 6: 2000 lines fit with headroom.
	batchLimit = bodyLimit{bytes: maxListBytes, values: 32 << 10, perValue: 128}
	// Hashes decode into a []string: a string header per value, doubled by growth.
	hashesLimit = bodyLimit{bytes: maxListBytes, values: 128 << 10, perValue: 32}
	// Joining is read before any token is checked: an agent's description and the runs it
	// already has (a few hundred bytes each) take little, so anyone gets little.
	joinLimit = bodyLimit{bytes: 256 << 10, values: 8 << 10, perValue: 128}
)

// limitOf returns the limit of a route, by its registered pattern.
func (s *Server) limitOf(pattern string) bodyLimit {
	switch pattern {
	case "PUT /api/blobs/{hash}", mlflowapi.PutArtifactRoute, mlflowapi.PartRoute:
		return bodyLimit{bytes: s.maxBlob(), stream: true}
	case "POST /api/blobs/bundle":
		return bodyLimit{bytes: maxBundleBytes, stream: true}
	case "POST /api/blobs/missing":
		return hashesLimit
	case "POST /api/runs/{id}/logs", "POST /api/runs/{id}/metrics":
		return batchLimit
	case "POST /api/agents/join":
		return joinLimit
	case "POST " + mlflowapi.Prefix + "runs/log-batch":
		// 1000 metrics, or 100 params of 6000 bytes and 100 tags of 8000 (MLflow's limits).
		return batchLimit
	}
	return jsonLimit
}

func (s *Server) maxBlob() int64 {
	if s.cfg.MaxBlobBytes > 0 {
		return s.cfg.MaxBlobBytes
	}
	return MaxBlobBytes
}

func (s *Server) bodyTimeout() time.Duration {
	if s.cfg.BodyTimeout > 0 {
		return s.cfg.BodyTimeout
	}
	return defaultBodyTimeout
}

// cost is the most memory reading and decoding a body of n bytes may take (n < 0: unknown).
func (l bodyLimit) cost(n int64) int64 {
	if l.stream {
		return streamCost
	}
	if n < 0 || n > l.bytes {
		n = l.bytes
	}
	// The body, the buffer's growth when its length is unknown, decoded strings; then the values
	// (a body of n bytes holds at most n/2+1 of them).
	return 3*n + min(int64(l.values), n/2+1)*l.perValue
}

// bodyInfo travels with a request whose body limitBodies took charge of.
type bodyInfo struct {
	route string
	limit bodyLimit
}

type bodyKey struct{}

// limitBodies applies the route's limit, deadline and memory reservation to every request body.
// route names the pattern a request matches.
func (s *Server) limitBodies(next http.Handler, route func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := bodyInfo{route: route(r)}
		info.limit = s.limitOf(info.route)
		if info.route == "" {
			info.route = r.Method + " " + r.URL.Path
		}
		if r.ContentLength > info.limit.bytes {
			s.writeRequestError(w, r, &tooLargeError{route: info.route, limit: info.limit.bytes, size: r.ContentLength})
			return
		}
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		cost, ctx := info.limit.cost(r.ContentLength), r.Context()
		b := &body{r: http.MaxBytesReader(w, r.Body, info.limit.bytes), rc: http.NewResponseController(w),
			info: info, timeout: s.bodyTimeout(),
			reserve: func() (func(), error) { return s.budget.reserve(ctx, cost) }}
		defer b.done()
		r.Body = b
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, bodyKey{}, info)))
	})
}

// body is a request body under its route's limit and deadline: a JSON body must arrive whole
// within the timeout, a stream may not stall for longer than it (so a large upload that keeps
// moving is never cut). Its errors are typed for writeError.
type body struct {
	r        io.ReadCloser // http.MaxBytesReader over the connection's body
	rc       *http.ResponseController
	info     bodyInfo
	timeout  time.Duration
	deadline time.Time // a JSON body's, set at its first read
	// reserve takes the body's share of the memory budget at its first read: a request refused
	// before its body is read (a bad token, a run token on an admin route) takes none.
	reserve func() (release func(), err error)
	release func()
}

func (b *body) Read(p []byte) (int, error) {
	if b.release == nil && b.reserve != nil {
		release, err := b.reserve()
		if err != nil {
			return 0, err
		}
		b.release = release
	}
	switch {
	case b.info.limit.stream:
		_ = b.rc.SetReadDeadline(time.Now().Add(b.timeout)) // unsupported by a test's writer: no deadline
	case b.deadline.IsZero():
		b.deadline = time.Now().Add(b.timeout)
		_ = b.rc.SetReadDeadline(b.deadline)
	}
	n, err := b.r.Read(p)
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		// The server goes on reading the connection to notice a client that leaves; that read
		// must not time out while the handler works on a body it has whole.
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.As(err, &mbe):
		err = &tooLargeError{route: b.info.route, limit: mbe.Limit, size: -1}
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &slowBodyError{route: b.info.route, timeout: b.timeout, stream: b.info.limit.stream}
	default: // the client's connection broke (an upload cut short): its error, not the server's
		err = &brokenBodyError{route: b.info.route, err: err}
	}
	return n, err
}

func (b *body) Close() error { return b.r.Close() }

// done gives back the body's share of the budget, once its request is answered.
func (b *body) done() {
	if b.release != nil {
		b.release()
	}
}

// budget is the memory request bodies may hold together (BodyMemoryBudget).
type budget struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
}

func newBudget(size int64, wait time.Duration) *budget {
	return &budget{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// reserve takes n bytes of the budget (all of it when n is larger), waiting while others hold
// it; release gives them back. A request waits holding nothing, so waits cannot deadlock.
func (b *budget) reserve(ctx context.Context, n int64) (release func(), err error) {
	n = min(n, b.size)
	ctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, &busyError{budget: b.size, wait: b.wait}
	}
	return sync.OnceFunc(func() { b.sem.Release(n) }), nil
}

// readJSON decodes a request's JSON body within its route's limits.
func readJSON(r *http.Request, v any) error {
	info, ok := r.Context().Value(bodyKey{}).(bodyInfo)
	if !ok { // limitBodies lets empty bodies through as they are
		info = bodyInfo{route: r.Method + " " + r.URL.Path, limit: jsonLimit}
	}
	b, err := readBody(r.Body, r.ContentLength, info)
	if err != nil {
		return err
	}
	if n := countValues(b); n > info.limit.values {
		return &tooLargeError{route: info.route, values: n, maxValues: info.limit.values}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return badRequest("malformed JSON body: " + err.Error())
	}
	if err := checkDuplicateKeys(b, reflect.TypeOf(v)); err != nil {
		return badRequest(err.Error()) // jsonkeys.go
	}
	return nil
}

// readBody reads a whole body (at most info's limit) into a buffer of its declared size when
// there is one, so that it is not copied as it grows. That buffer is made only after the first
// read, which is where the body takes its share of the memory budget (body.Read): a request
// waiting for the budget holds 512 bytes, not its declared size (before, 20 bodies of 7.7 MB
// waiting at once held 154 MB besides the budget's 64 MiB).
func readBody(r io.Reader, declared int64, info bodyInfo) ([]byte, error) {
	limit := info.limit.bytes
	buf := make([]byte, 0, 512)
	for first := true; ; first = false {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if first && err == nil && declared >= 0 && min(declared, limit)+1 > int64(cap(buf)) {
			full := make([]byte, len(buf), min(declared, limit)+1) // +1: reaching the end takes one more read
			copy(full, buf)
			buf = full
		}
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			if _, _, _, ok := bodyError(err); ok {
				return nil, err
			}
			return nil, &brokenBodyError{route: info.route, err: err}
		case int64(len(buf)) > limit: // a body limitBodies did not wrap
			return nil, &tooLargeError{route: info.route, limit: limit, size: -1}
		case len(buf) == cap(buf):
			buf = append(buf, 0)[:len(buf)] // grow
		}
	}
}

// countValues returns an upper bound of the number of JSON values in b without decoding it:
// every value but the outermost one is an array element or an object member, and all but the
// first of each container follow a comma. Bytes inside strings do not count.
func countValues(b []byte) int {
	n, inString, escaped := 1, false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',' || c == '[' || c == '{':
			n++
		}
	}
	return n
}

// tooLargeError is a body over its route's limit: 413.
type tooLargeError struct {
	route     string
	limit     int64 // bytes
	size      int64 // declared size, -1 when not known
	values    int   // the values found, when that limit was the one passed
	maxValues int
}

func (e *tooLargeError) Error() string {
	switch {
	case e.maxValues > 0:
		return fmt.Sprintf("request body too large: %s takes at most %d JSON values, this one has %d",
			e.route, e.maxValues, e.values)
	case e.size > 0:
		return fmt.Sprintf("request body too large: %s takes at most %s, this one has %s",
			e.route, sizeIEC(e.limit), sizeIEC(e.size))
	}
	return fmt.Sprintf("request body too large: %s takes at most %s", e.route, sizeIEC(e.limit))
}

// slowBodyError is a body that did not arrive in time: 408.
type slowBodyError struct {
	route   string
	timeout time.Duration
	stream  bool
}

func (e *slowBodyError) Error() string {
	if e.stream {
		return fmt.Sprintf("request body too slow: %s received nothing for %s", e.route, e.timeout)
	}
	return fmt.Sprintf("request body too slow: %s takes its whole body within %s", e.route, e.timeout)
}

// brokenBodyError is a body the client's connection failed to deliver: 400.
type brokenBodyError struct {
	route string
	err   error
}

func (e *brokenBodyError) Error() string {
	return fmt.Sprintf("request body of %s cut short: %v", e.route, e.err)
}

func (e *brokenBodyError) Unwrap() error { return e.err }

// busyError is a request that waited too long for the body memory budget: 503.
type busyError struct {
	budget int64
	wait   time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("server busy: the request bodies being read hold all of its %s of memory for bodies, "+
		"and %s went by; try again", sizeIEC(e.budget), e.wait)
}

// sizeIEC writes a byte count for people: 8 MiB, 61.0 MiB, 300 B.
func sizeIEC(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	suffix := string("KMGTPE"[exp]) + "iB"
	if n%div == 0 {
		return fmt.Sprintf("%d %s", n/div, suffix)
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}
