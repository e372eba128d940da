package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// sshDialWithin bounds the dial to an instance's SSH server.
const sshDialWithin = 10 * time.Second

// sshTunnel is GET /instances/{name}/ssh: `hangar compute connect-ssh` (ssh's ProxyCommand)
// upgrades its connection ("Upgrade: hangar-ssh", 101 Switching Protocols) and the raw bytes go
// both ways between it and the instance's SSH server, which its agent runs (the SSH protocol,
// with its host key pinned by the client, runs inside). The route is public in the access table
// because it checks its own credentials: a user's token (or the workspace token), for the
// instance's owner or a workspace owner; never a run's token, never a studio cookie. The request
// has no body.
func (s *instanceRoutes) sshTunnel(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p, err := s.tokenPrincipal(r, bearerOrBasic(r))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	if err := sshUpgradeOK(r); err != nil {
		writeError(w, s.log, err)
		return
	}
	t, err := s.cfg.Instances.SSHEndpoint(r.Context(), name)
	if t != nil {
		if aerr := instanceOwnerAllowed(p, name, t.Owner, "connect to", "SSH server"); aerr != nil {
			err = aerr // who may not connect is not told why the instance cannot take one
		}
	}
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	d := net.Dialer{Timeout: sshDialWithin}
	upstream, err := d.DialContext(r.Context(), "tcp", t.Addr)
	if err != nil {
		writeError(w, s.log, &httpError{http.StatusBadGateway, api.CodeBusy, "the instance's SSH server did not answer: " + err.Error()})
		return
	}
	defer upstream.Close()
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeError(w, s.log, fmt.Errorf("ssh tunnel: hijack: %w", err))
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Time{}) // the server's read and write timeouts do not apply to a session
	if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+api.SSHUpgrade+"\r\n\r\n"); err != nil {
		return
	}
	s.identity.audit(context.WithoutCancel(r.Context()), p.user, "compute.connect-ssh", name, "")
	s.log.Info("ssh tunnel opened", "instance", name, "user", p.user)
	pipe(conn, brw.Reader, upstream)
	s.log.Info("ssh tunnel closed", "instance", name, "user", p.user)
}

// sshUpgradeOK refuses a request that is not an upgrade to hangar-ssh, or that has a body.
func sshUpgradeOK(r *http.Request) error {
	upgrade := false
	for _, v := range r.Header.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			upgrade = upgrade || strings.EqualFold(strings.TrimSpace(tok), "upgrade")
		}
	}
	if !upgrade || !strings.EqualFold(r.Header.Get("Upgrade"), api.SSHUpgrade) {
		return &httpError{http.StatusBadRequest, api.CodeInvalid, "this route upgrades the connection: send Connection: Upgrade and Upgrade: " + api.SSHUpgrade + " (hangar compute connect-ssh does)"}
	}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		return &httpError{http.StatusBadRequest, api.CodeInvalid, "the request has no body"}
	}
	return nil
}

// pipe copies between the client (with what the server had already read of it) and the
// instance's SSH server until both directions end; either side closing ends the other.
func pipe(client net.Conn, buffered io.Reader, upstream net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(upstream, io.MultiReader(buffered, client))
		closeWrite(upstream)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(client, upstream)
		closeWrite(client)
	}()
	wg.Wait()
}

// closeWrite half-closes c where it can (TCP), else closes it.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// instanceOwnerAllowed lets the instance's owner and workspace owners use its SSH server or
// Jupyter (what), never a run's token.
func instanceOwnerAllowed(p principal, name, owner, verb, what string) error {
	if p.runID == "" && (p.role == api.RoleOwner || p.user != "" && p.user == owner) {
		return nil
	}
	who := "a run token"
	if p.runID == "" {
		who = fmt.Sprintf("user %s (role %s)", p.user, p.role)
	}
	return &httpError{http.StatusForbidden, api.CodeNotAllowed, fmt.Sprintf(
		"%s may not %s compute instance %s's %s: only its owner (%s) and workspace owners may", who, verb, name, what, owner)}
}
