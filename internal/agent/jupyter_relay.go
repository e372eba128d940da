package agent

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"strings"
	"time"
)

// Jupyter's own server listens on a Unix socket in its runtime directory (0600, in the agent's
// work dir, which runs do not see), with no token of its own: nothing a page of it could show a
// browser opens it. The workspace server reaches it through this relay, on a TCP port of the
// address it reaches the node at, with the relay's key ("Authorization: token <key>"), which only
// the agent and the server hold: Jupyter never sees it, so no page, JSON, cookie or websocket
// frame it sends can carry it. A request without the key is refused here.

// jupyterRelay forwards the workspace server's requests (HTTP and websockets) to Jupyter's socket.
type jupyterRelay struct {
	ln  net.Listener
	srv *http.Server
}

// newJupyterRelay listens on ip (a free port) and serves until close.
func newJupyterRelay(ip, sock, key string, log *slog.Logger) (*jupyterRelay, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	rl := &jupyterRelay{ln: ln, srv: &http.Server{Handler: relayHandler(sock, key, log), ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := rl.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("jupyter relay stopped", "err", err)
		}
	}()
	return rl, nil
}

// addr is where the relay listens (what the agent reports).
func (rl *jupyterRelay) addr() string { return rl.ln.Addr().String() }

func (rl *jupyterRelay) close() { _ = rl.srv.Close() }

// relayHandler checks the key and forwards to the socket, the key and the caller's cookies
// left here. The Host is kept: Jupyter checks a websocket's Origin against it.
func relayHandler(sock, key string, log *slog.Logger) http.Handler {
	proxy := &httputil.ReverseProxy{
		Transport: unixTransport(sock),
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "jupyter"
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Warn("jupyter relay", "path", r.URL.Path, "err", err)
			http.Error(w, "Jupyter did not answer", http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !relayKeyOK(r.Header.Get("Authorization"), key) {
			http.Error(w, "this port serves the instance's Jupyter to the workspace server only: open it through the workspace (hangar compute show)", http.StatusForbidden)
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// relayKeyOK reports whether an Authorization header carries the relay's key.
func relayKeyOK(header, key string) bool {
	got, ok := strings.CutPrefix(header, "token ")
	return ok && key != "" && subtle.ConstantTimeCompare([]byte(got), []byte(key)) == 1
}

// shortSocket names a Unix socket in a directory by a path that stays short whatever the
// directory's (a socket's path holds at most 107 bytes): through /proc/self/fd of the directory,
// held open.
type shortSocket struct {
	dir  *os.File
	name string
}

func openShortSocket(dir, name string) (*shortSocket, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return &shortSocket{dir: d, name: name}, nil
}

func (s *shortSocket) path() string { return fmt.Sprintf("/proc/self/fd/%d/%s", s.dir.Fd(), s.name) }

func (s *shortSocket) close() { _ = s.dir.Close() }

// unixTransport is an HTTP transport whose every connection goes to the Unix socket sock.
func unixTransport(sock string) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConns: 16, IdleConnTimeout: time.Minute,
	}
}
