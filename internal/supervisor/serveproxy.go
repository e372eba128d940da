package supervisor

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/serving/scoring"
)

// A replica answers only its workspace's router: every request of the router carries the
// replica's secret (scoring.SecretHeader). Hangar's scoring server checks it itself; an image
// that serves by its own entrypoint cannot, so the supervisor answers the router in its place,
// where the router reaches the node, and forwards to the image, published on the node's
// loopback only, what carries the secret, without it. The proxy lives as long as the
// supervisor: a supervisor that is gone refuses the router's connections, which the router then
// sends to another replica.

// admit says how the proxy answers a request: 0 to forward it, else the status refusing it
// (401 without the secret, 403 with another), compared in constant time.
func admit(secret string, h http.Header) int {
	given := h.Values(scoring.SecretHeader)
	switch {
	case len(given) == 0:
		return http.StatusUnauthorized
	case len(given) > 1 || subtle.ConstantTimeCompare([]byte(given[0]), []byte(secret)) != 1:
		return http.StatusForbidden
	}
	return 0
}

// replicaProxy refuses what does not carry the secret and forwards the rest to upstream.
type replicaProxy struct {
	secret string
	proxy  *httputil.ReverseProxy
}

func newReplicaProxy(secret, upstream string, log *slog.Logger) *replicaProxy {
	return &replicaProxy{secret: secret, proxy: &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", upstream
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Del(scoring.SecretHeader) // the image never sees it
		},
		FlushInterval: -1, // streamed answers go on as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Warn("serve: the image did not answer", "path", r.URL.Path, "err", err)
			refuse(w, http.StatusBadGateway, "the image did not answer: "+err.Error())
		},
	}}
}

func (p *replicaProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch admit(p.secret, r.Header) {
	case http.StatusUnauthorized:
		refuse(w, http.StatusUnauthorized, "this replica answers only its workspace's router; call the endpoint's scoring URI")
	case http.StatusForbidden:
		refuse(w, http.StatusForbidden, "this replica answers only its workspace's router; the replica secret is wrong")
	default:
		p.proxy.ServeHTTP(w, r)
	}
}

// refuse answers as Hangar's scoring server does: {"message": ...}.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// startReplicaProxy listens on a free port of l's address for the router and serves the proxy to
// upstream there until the supervisor ends; it returns the port.
func startReplicaProxy(l listen, upstream string, log *slog.Logger) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(l.host, "0"))
	if err != nil {
		return 0, fmt.Errorf("listen for the router on %s: %w", l.host, err)
	}
	srv := &http.Server{Handler: newReplicaProxy(l.secret, upstream, log), ReadHeaderTimeout: time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Warn("serve: the replica's proxy stopped", "err", err)
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return strconv.Atoi(port)
}
