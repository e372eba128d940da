package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/home"
)

// listening is the server's bound socket and how it is reached.
type listening struct {
	ln   net.Listener
	cert *home.ServerCert // nil: plain HTTP
	// url is the server's address for its supervisors, agents and the local CLI: an unspecified
	// listen host (every interface) is reached on loopback, which the certificate always names.
	url string
}

// listen binds the requested address, or the one this workspace used last (so that running
// supervisors find a restarted server where they left it, served as it was: HTTPS stays on),
// or any free loopback port; then it serves TLS as decided by home.DecideTLS, with a given or
// the workspace's generated certificate.
func listen(h home.Home, o cli.ServeOptions, log *slog.Logger) (*listening, error) {
	addr, wasTLS := o.Listen, false
	if addr == "" {
		addr, wasTLS = previousAddr(h)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", addr, err)
	}
	choice := home.TLSChoice{TLS: o.TLS.On, Given: o.TLS.CertFile != "", Insecure: o.TLS.InsecureNoTLS, WasTLS: wasTLS}
	on, err := home.DecideTLS(host, choice)
	if err != nil && o.Listen == "" && errors.Is(err, home.ErrCleartext) {
		// The last server was forced to plain HTTP beyond loopback: a restart without the flag
		// (the CLI starting the local server) keeps the port on loopback only.
		_, port, _ := net.SplitHostPort(addr)
		addr, host, on, err = net.JoinHostPort("127.0.0.1", port), "127.0.0.1", false, nil
		log.Warn("not reusing the last address without --insecure-no-tls: listening on loopback only", "listen", addr)
	}
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && o.Listen == "" && addr != "127.0.0.1:0" {
		ln, err = net.Listen("tcp", "127.0.0.1:0") // the last address is taken: any loopback port
	}
	if err != nil {
		return nil, err
	}
	l := &listening{ln: ln, url: "http://" + reachAddr(ln.Addr())}
	if !on {
		if !home.IsLoopback(host) {
			log.Warn("serving plain HTTP on a non-loopback address (--insecure-no-tls): the workspace token and run tokens cross the network in clear",
				"listen", ln.Addr().String())
		}
		return l, nil
	}
	cert, err := serverCert(h, o.TLS, host, advertiseHost(o.AdvertiseURL), log)
	if err != nil {
		ln.Close()
		return nil, err
	}
	l.cert, l.url = &cert, "https://"+reachAddr(ln.Addr())
	l.ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert.TLS}, MinVersion: tls.VersionTLS12})
	log.Info("serving HTTPS", "fingerprint", cert.Fingerprint)
	return l, nil
}

// serverCert is the given certificate, or the workspace's generated one for host's names.
func serverCert(h home.Home, t cli.TLSOptions, host, advertise string, log *slog.Logger) (home.ServerCert, error) {
	if t.CertFile != "" {
		return home.LoadCertificate(t.CertFile, t.KeyFile)
	}
	var addrs []net.IP
	if ifs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range ifs {
			if n, ok := a.(*net.IPNet); ok {
				addrs = append(addrs, n.IP)
			}
		}
	}
	hostname, _ := os.Hostname()
	names := home.CertNames(host, t.Hosts, addrs, hostname)
	if h.Database != "" && advertise != "" {
		// One of several servers (design 0020) shares the workspace's certificate: it must name
		// the address the others and the nodes reach this one at, not every name of this machine.
		names = home.CertNames(advertise, t.Hosts, nil, "")
	}
	cert, err := h.GeneratedCertificate(names, time.Now())
	if err != nil {
		return cert, err
	}
	if len(cert.Replaced) > 0 {
		log.Warn("made a new certificate: the old one did not name every host; CLIs that pinned the old one refuse it "+
			"until their pin is removed, and supervisors started before keep failing to reach this server",
			"missing", cert.Replaced, "fingerprint", cert.Fingerprint)
	} else if cert.Made {
		log.Info("made the workspace's certificate", "dir", h.TLSDir(), "fingerprint", cert.Fingerprint)
	}
	return cert, nil
}

// previousAddr is the address the last server of this workspace listened on, and whether it
// served HTTPS ("127.0.0.1:0" without one).
func previousAddr(h home.Home) (string, bool) {
	si, err := h.ReadServerInfo()
	if err != nil {
		return "127.0.0.1:0", false
	}
	u, err := url.Parse(si.URL)
	if err != nil || u.Host == "" {
		return "127.0.0.1:0", false
	}
	if si.Listen != "" {
		return si.Listen, u.Scheme == "https"
	}
	return u.Host, u.Scheme == "https"
}

// reachAddr is where this machine reaches a listener: its own address, or loopback for a
// listener on every interface ("[::]:8700" names no host a client can verify).
func reachAddr(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(ta.Port))
}

// advertiseHost is the host of --advertise-url ("" without one).
func advertiseHost(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Hostname()
	}
	return ""
}
