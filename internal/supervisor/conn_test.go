package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// The retry loop follows api.Permanent: answers that ask to come back later (408, 425, 429)
// and 5xx are retried; a refusal (4xx) ends it after one call.
func TestConnRetryFollowsPermanent(t *testing.T) {
	tests := []struct {
		name      string
		answers   []int // then 200
		wantErr   bool
		wantCalls int
	}{
		{"throttled then ok", []int{http.StatusTooManyRequests, http.StatusTooManyRequests}, false, 3},
		{"request timeout then ok", []int{http.StatusRequestTimeout}, false, 2},
		{"too early then ok", []int{http.StatusTooEarly}, false, 2},
		{"server errors then ok", []int{http.StatusBadGateway, http.StatusServiceUnavailable}, false, 3},
		{"refused", []int{http.StatusConflict}, true, 1},
		{"gone", []int{http.StatusGone}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1))
				if n <= len(tt.answers) {
					w.WriteHeader(tt.answers[n-1])
					fmt.Fprintf(w, `{"error":"answer %d"}`, n)
					return
				}
				fmt.Fprint(w, `{}`)
			}))
			defer srv.Close()
			c := &conn{c: api.NewClient(srv.URL, "tok"), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
				maxBackoff: 20 * time.Millisecond}
			err := c.retry(t.Context(), "heartbeat", func(ctx context.Context) error {
				_, err := c.c.Runs.Heartbeat(ctx, "r1")
				return err
			})
			if (err != nil) != tt.wantErr || int(calls.Load()) != tt.wantCalls {
				t.Errorf("retry = %v after %d calls; want error %v after %d", err, calls.Load(), tt.wantErr, tt.wantCalls)
			}
		})
	}
}

// A server that never answers is given up on after the bound, not waited for forever; a
// workspace whose directory is gone from the machine is given up on within a minute, whatever the
// bound (issue 27: supervisors of deleted workspaces piled up on a node).
func TestRetryGivesUpOnAnAbsentServer(t *testing.T) {
	dead := "http://127.0.0.1:1" // nothing listens on port 1
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	call := func(c *conn) error {
		return c.retry(t.Context(), "fetch spec", func(ctx context.Context) error {
			_, err := c.c.Runs.Heartbeat(ctx, "r1")
			return err
		})
	}
	c := newConn(api.NewClient(dead, "tok"), "", quiet, 300*time.Millisecond)
	c.maxBackoff = 20 * time.Millisecond
	if err := call(c); !errors.Is(err, ErrServerGone) {
		t.Fatalf("retry against a server that never answered = %v, want ErrServerGone", err)
	}

	home := t.TempDir()
	urlFile := filepath.Join(home, "ws", "server.json")
	c = newConn(api.NewClient(dead, "tok"), urlFile, quiet, 24*time.Hour)
	if got := c.offlineLimit(); got != homeGoneOffline {
		t.Errorf("limit with the workspace directory gone = %s, want %s", got, homeGoneOffline)
	}
	if err := os.MkdirAll(filepath.Dir(urlFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := c.offlineLimit(); got != 24*time.Hour {
		t.Errorf("limit with the workspace directory there = %s, want the configured day", got)
	}
}
