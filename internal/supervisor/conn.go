package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
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
	// maxOffline is how long the server may stay unreachable before the supervisor gives up
	// (its files stay on the node); lastOK is the last time the server answered.
	maxOffline time.Duration
	lastOK     atomic.Int64
}

// ErrServerGone means the server has been unreachable for longer than the supervisor waits.
var ErrServerGone = errors.New("the workspace server has been unreachable for too long")

// homeGoneOffline is how long a supervisor waits for a server whose workspace directory is gone
// from this machine (deleted: the server will not be back there).
const homeGoneOffline = time.Minute

// newConn is a connection that has heard from the server now, as far as giving up goes: a
// server that never answers is given up on after maxOffline too.
func newConn(c *api.Client, urlFile string, log *slog.Logger, maxOffline time.Duration) *conn {
	cn := &conn{c: c, urlFile: urlFile, log: log, maxBackoff: 5 * time.Second, maxOffline: maxOffline}
	cn.answered()
	return cn
}

// answered records that the server answered.
func (c *conn) answered() { c.lastOK.Store(time.Now().UnixNano()) }

// offlineLimit is how long the server may stay silent: maxOffline, or homeGoneOffline once the
// workspace's directory on this machine (where the URL file was) is gone.
func (c *conn) offlineLimit() time.Duration {
	limit := c.maxOffline
	if c.urlFile != "" && (limit <= 0 || limit > homeGoneOffline) {
		if _, err := os.Stat(filepath.Dir(c.urlFile)); errors.Is(err, os.ErrNotExist) {
			limit = homeGoneOffline
		}
	}
	return limit
}

// retryValue is retry for a call that answers a value: the value of the attempt that succeeded.
func retryValue[T any](ctx context.Context, c *conn, what string, fn func(ctx context.Context) (T, error)) (T, error) {
	var v T
	err := c.retry(ctx, what, func(ctx context.Context) error {
		var err error
		v, err = fn(ctx)
		return err
	})
	return v, err
}

// retry calls fn until it succeeds, fails permanently (api.Permanent: the server refused) or
// ctx ends, waiting a jittered, doubling backoff between attempts.
func (c *conn) retry(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	backoff := api.Backoff{Base: 100 * time.Millisecond, Max: c.maxBackoff}
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := fn(cctx)
		cancel()
		var answer *api.Error
		if err == nil || (errors.As(err, &answer) && answer.Status < http.StatusInternalServerError) {
			c.answered() // the server is there, even when it says later
		}
		if err == nil {
			if attempt > 1 {
				c.log.Info("server reachable again", "call", what, "attempts", attempt)
			}
			return nil
		}
		if api.Permanent(err) || ctx.Err() != nil {
			return err
		}
		if limit, last := c.offlineLimit(), c.lastOK.Load(); limit > 0 && time.Since(time.Unix(0, last)) > limit {
			return fmt.Errorf("%s: %w (%s): %v", what, ErrServerGone, limit, err)
		}
		if attempt == 1 || attempt%20 == 0 {
			c.log.Warn("server call failed; retrying", "call", what, "attempt", attempt, "err", err)
		}
		c.reresolve()
		if err := backoff.Wait(ctx); err != nil {
			return err
		}
	}
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
