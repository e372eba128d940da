package replica

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// Headers a follower adds to a request it forwards: the caller's address, and the key that
// vouches for it (a leader takes the address from nobody else).
const (
	forwardedByHeader = "X-Hangar-Forwarded-By"
	clientAddrHeader  = "X-Hangar-Client-Addr"
)

// forwardKey is what a follower proves it is a server of the workspace with: derived from the
// workspace's secret (in its database), so only those that can read the database hold it.
func forwardKey(secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("hangar: a request forwarded by a server of this workspace"))
	return hex.EncodeToString(m.Sum(nil))
}

// trust makes the leader see a forwarded request's caller where it came from: the client address
// header counts only with the workspace's forwarding key, and neither header goes further.
func trust(key func() string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		by, addr := r.Header.Get(forwardedByHeader), r.Header.Get(clientAddrHeader)
		r.Header.Del(forwardedByHeader)
		r.Header.Del(clientAddrHeader)
		if by != "" && addr != "" {
			if k := key(); k != "" && hmac.Equal([]byte(by), []byte(k)) {
				if _, _, err := net.SplitHostPort(addr); err == nil {
					r.RemoteAddr = addr
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// forwarder passes a follower's requests to the leader as they are (streams, long polls and
// upgrades included), adding the caller's address and the forwarding key.
type forwarder struct {
	leader func() string // the leader's address, "" while none is known
	key    func() string
	// unreachable is told when the leader cannot be reached (the follower tries for the lead
	// at once rather than at its next beat).
	unreachable func()
	// self is this server's own address: a request is never forwarded there (it would come
	// back to this forwarder).
	self  string
	proxy *httputil.ReverseProxy
	log   *slog.Logger
}

func newForwarder(leader, key func() string, unreachable func(), ca []byte, log *slog.Logger) (*forwarder, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 0 // long polls wait for their answer
	t.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 15 * time.Second}).DialContext
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("forward to the leader: the servers' certificate is not PEM")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	f := &forwarder{leader: leader, key: key, unreachable: unreachable, log: log}
	f.proxy = &httputil.ReverseProxy{
		Rewrite:       f.rewrite,
		Transport:     t,
		FlushInterval: -1, // logs and events stream as they come
		ErrorHandler:  f.unavailable,
	}
	return f, nil
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch l := f.leader(); {
	case l == "":
		f.unavailable(w, r, errors.New("no server leads the workspace"))
		return
	case l == f.self:
		f.unavailable(w, r, errors.New("this server is taking the lead"))
		return
	}
	f.proxy.ServeHTTP(w, r)
}

func (f *forwarder) rewrite(pr *httputil.ProxyRequest) {
	u, err := url.Parse(f.leader())
	if err != nil {
		u = &url.URL{Scheme: "http", Host: "invalid."} // unreachable: answered by unavailable
	}
	pr.SetURL(u)
	pr.Out.Host = pr.In.Host // the address the caller used (cookies, OIDC redirects, origins)
	pr.Out.Header.Del(forwardedByHeader)
	pr.Out.Header.Del(clientAddrHeader)
	if k := f.key(); k != "" {
		pr.Out.Header.Set(forwardedByHeader, k)
		pr.Out.Header.Set(clientAddrHeader, pr.In.RemoteAddr)
	}
}

// unavailable answers 503 while the leader cannot be reached: callers (supervisors, agents, the
// CLI's waits) retry, and meanwhile a follower may take the lead.
func (f *forwarder) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the caller left
	}
	f.unreachable()
	f.log.Warn("cannot forward to the leading server", "path", r.URL.Path, "leader", f.leader(), "err", err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(api.ErrorBody{Code: "leader_unavailable",
		Error: "this server follows the workspace's leading server, which cannot be reached now (a failover may be under way): retry in a few seconds"})
}

// dialTimeout bounds connecting to the leader (a dead machine answers nothing).
const dialTimeout = 5 * time.Second
