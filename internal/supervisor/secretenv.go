package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/binding"
)

// A job's secrets (docs/secrets.md): the run's spec names them in its environment variables
// (${{secrets.<name>}}); the supervisor fetches their values with its run token, puts them in
// the command's environment, and from then on replaces every occurrence of a value with "***"
// in the run's log (each line before it is written, so also when the value reached the pipe in
// pieces), in its status reasons and warnings, and in its own log lines (system_logs).

// secretEnv is what a supervisor holds of its run's secrets.
type secretEnv struct {
	// vars are the job's environment variables that name secrets, with the values bound.
	vars map[string]string
	// red redacts the values (nil until they are fetched, and when the run names none).
	red atomic.Pointer[redactor]
}

// redactText replaces the values in text ("***").
func (e *secretEnv) redactText(text string) string {
	if r := e.red.Load(); r != nil {
		return r.text(text)
	}
	return text
}

// loadSecrets fetches the values of the secrets the run's spec names and binds the variables
// that name them; the run's log (p) and every later report redact them.
func (s *Supervisor) loadSecrets(ctx context.Context, p *pipeline) error {
	refs, err := binding.SecretRefs(&s.spec.Spec)
	if err != nil || len(refs) == 0 {
		return err
	}
	got, err := retryValue(ctx, s.conn, "fetch secrets", func(ctx context.Context) (*api.RunSecrets, error) {
		return s.conn.c.Runs.Secrets(ctx, s.cfg.RunID)
	})
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	values := make([]string, 0, len(got.Values))
	for _, v := range got.Values {
		values = append(values, v)
	}
	r := newRedactor(values)
	s.secrets.red.Store(r)
	p.capt.setRedactor(r)
	vars := map[string]string{}
	for _, ref := range refs {
		if _, done := vars[ref.Var]; done {
			continue
		}
		v, err := binding.BindSecrets(s.spec.Spec.EnvironmentVariables[ref.Var], got.Values)
		if err != nil {
			return fmt.Errorf("environment_variables.%s: %w", ref.Var, err)
		}
		vars[ref.Var] = v
	}
	s.secrets.vars = vars
	return nil
}

// redactAlso adds values (other secrets the run holds: its datastores' credentials) to what the
// run's log (p) and every later report redact.
func (e *secretEnv) redactAlso(values []string, p *pipeline) {
	if len(values) == 0 {
		return
	}
	if old := e.red.Load(); old != nil {
		for _, v := range old.values {
			values = append(values, string(v))
		}
	}
	r := newRedactor(values)
	e.red.Store(r)
	p.capt.setRedactor(r)
}

// envValue is a job's environment variable as the command gets it: with its secrets bound.
func (s *Supervisor) envValue(name, value string) string {
	if v, ok := s.secrets.vars[name]; ok {
		return v
	}
	return value
}

// minPartLen is the shortest line of a multi-line secret that is redacted on its own: a log
// splits such a value into lines, and shorter lines ("}", "-----") would mask ordinary text.
const minPartLen = 6

// redactor replaces secret values in text. A value with line breaks is also redacted line by
// line, since the run's log is cut into lines before it is redacted.
type redactor struct {
	values [][]byte // longest first
}

func newRedactor(secrets []string) *redactor {
	seen := map[string]bool{}
	var vals []string
	add := func(v string) {
		if v != "" && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	for _, v := range secrets {
		add(v)
		if strings.ContainsAny(v, "\r\n") {
			for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
				if len(part) >= minPartLen {
					add(part)
				}
			}
		}
	}
	sort.Slice(vals, func(i, j int) bool {
		if len(vals[i]) != len(vals[j]) {
			return len(vals[i]) > len(vals[j])
		}
		return vals[i] < vals[j]
	})
	r := &redactor{}
	for _, v := range vals {
		r.values = append(r.values, []byte(v))
	}
	return r
}

var redactedBytes = []byte("***")

// line returns b with every value replaced (b itself when it holds none).
func (r *redactor) line(b []byte) []byte {
	if r == nil {
		return b
	}
	for _, v := range r.values {
		if bytes.Contains(b, v) {
			b = bytes.ReplaceAll(b, v, redactedBytes)
		}
	}
	return b
}

func (r *redactor) text(s string) string {
	if r == nil {
		return s
	}
	return string(r.line([]byte(s)))
}

// hold is how many bytes at the end of b may be the start of a value: a partial line written
// out early keeps them back, so that a value arriving in pieces is still seen whole.
func (r *redactor) hold(b []byte) int {
	if r == nil {
		return 0
	}
	best := 0
	for _, v := range r.values {
		for n := min(len(v)-1, len(b)); n > best; n-- {
			if bytes.HasSuffix(b, v[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

// setRedactor makes the capture redact every line it writes from now on.
func (c *capture) setRedactor(r *redactor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.red = r
}

// flushEarly writes out a partial line before its end arrived (c.mu held): idle, or too long.
// What may be the start of a secret stays pending until more output shows what it is.
func (c *capture) flushEarly() {
	keep := c.red.hold(c.pending)
	if keep == 0 {
		c.flushPartial()
		return
	}
	if keep == len(c.pending) {
		return
	}
	held := append([]byte(nil), c.pending[len(c.pending)-keep:]...)
	c.pending = c.pending[:len(c.pending)-keep]
	c.emit()
	c.pending = append(c.pending, held...)
}

// redactHandler is a slog handler that redacts the run's secrets from the supervisor's own log
// lines (its message and string attributes): they end up in system_logs.
type redactHandler struct {
	next slog.Handler
	env  *secretEnv
}

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	if h.env.red.Load() == nil {
		return h.next.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, h.env.redactText(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactHandler) redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.env.redactText(v.String()))
	case slog.KindAny: // errors, and whatever prints itself
		return slog.String(a.Key, h.env.redactText(fmt.Sprint(v.Any())))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, 0, len(attrs))
		for _, g := range attrs {
			out = append(out, h.redactAttr(g))
		}
		return slog.Group(a.Key, out...)
	}
	return a
}

func (h redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return redactHandler{next: h.next.WithAttrs(attrs), env: h.env}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{next: h.next.WithGroup(name), env: h.env}
}
