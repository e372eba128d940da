package supervisor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// A supervisor given several servers (a replicated workspace, design 0020) moves to the next when
// one cannot be reached; a run's MLflow client knows one address only. For it, the supervisor
// relays: MLFLOW_TRACKING_URI is a loopback address of the supervisor's, which passes each
// request to the server the supervisor uses now, and answers 503 (which MLflow's client retries)
// when that one cannot be reached, moving on to the next for the retry. The relay adds nothing to
// a request: the run's client sends its own token, as it would to the server.

// startRelay listens on loopback and relays until ctx ends; it returns the relay's URL, or ""
// when the supervisor does not reach the workspace's servers at their own addresses (a server
// on SQLite, a tunnel, a load balancer: the run's client then goes where the supervisor does).
// Run after fetchSpec: the spec lists the servers.
func (s *Supervisor) startRelay(ctx context.Context) (string, error) {
	if !s.direct {
		return "", nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	proxy := &httputil.ReverseProxy{
		Transport: s.conn.c.HTTPClient().Transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			u, err := url.Parse(s.conn.c.BaseURL())
			if err != nil {
				u = &url.URL{Scheme: "http", Host: "invalid."}
			}
			pr.SetURL(u)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				s.conn.c.Unreachable(r.URL.String()) // r is the outgoing request
				s.log.Warn("relaying a run's request: the server cannot be reached; moving on", "err", err)
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the workspace server cannot be reached; retry", http.StatusServiceUnavailable)
		},
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("the run's relay stopped", "err", err)
		}
	}()
	return "http://" + ln.Addr().String(), nil
}
