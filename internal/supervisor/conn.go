package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// conn wraps the API client with retries: while the server cannot be reached (or answers 5xx),
// calls are retried with backoff, and the server's address is re-read from the URL file.
type conn struct {
	c       *api.Client
	urlFile string
	log     *slog.Logger
	// maxBackoff caps the wait between retries.
	maxBackoff time.Duration
}

// retry calls fn until it succeeds, fails permanently (a 4xx answer) or ctx ends.
func (c *conn) retry(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := fn(cctx)
		cancel()
		if err == nil {
			if attempt > 1 {
				c.log.Info("server reachable again", "call", what, "attempts", attempt)
			}
			return nil
		}
		if permanent(err) || ctx.Err() != nil {
			return err
		}
		if attempt == 1 || attempt%20 == 0 {
			c.log.Warn("server call failed; retrying", "call", what, "attempt", attempt, "err", err)
		}
		c.reresolve()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, c.maxBackoff)
	}
}

// permanent reports whether retrying cannot help: the server answered and refused.
func permanent(err error) bool {
	var e *api.Error
	if errors.As(err, &e) {
		return e.Status < http.StatusInternalServerError && e.Status != http.StatusTooManyRequests
	}
	return false
}

// reresolve re-reads the server's address from the URL file (a restarted local server may have moved).
func (c *conn) reresolve() {
	if c.urlFile == "" {
		return
	}
	b, err := os.ReadFile(c.urlFile)
	if err != nil {
		return
	}
	var v struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(b, &v) == nil && v.URL != "" && v.URL != c.c.BaseURL() {
		c.log.Info("server moved", "url", v.URL)
		c.c.SetBaseURL(v.URL)
	}
}
