package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// ConnectSSH opens the byte stream to compute instance name's SSH server through the workspace
// server (GET /instances/{name}/ssh, upgraded to SSHUpgrade), verified and authenticated as
// the client's API calls are. The caller closes it.
func (c *InstanceClient) ConnectSSH(ctx context.Context, name string) (io.ReadWriteCloser, error) {
	req, err := c.client.newRequest(ctx, http.MethodGet, "/instances/"+url.PathEscape(name)+"/ssh", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", SSHUpgrade)
	resp, err := http1(c.client.hc).Do(req)
	if err != nil {
		return nil, fmt.Errorf("connect to instance %s's SSH server: %w", name, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return nil, fmt.Errorf("connect to instance %s's SSH server: the server answered %s, not an upgrade", name, resp.Status)
		}
		return nil, decodeError(resp)
	}
	if !strings.EqualFold(resp.Header.Get("Upgrade"), SSHUpgrade) {
		resp.Body.Close()
		return nil, fmt.Errorf("connect to instance %s's SSH server: upgraded to %q, not %s", name, resp.Header.Get("Upgrade"), SSHUpgrade)
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		return nil, errors.New("connect to the SSH server: the upgraded connection is not writable")
	}
	return rwc, nil
}

// http1 is hc speaking HTTP/1.1 only (HTTP/2 has no Upgrade), with hc's TLS settings.
func http1(hc *http.Client) *http.Client {
	t, ok := hc.Transport.(*http.Transport)
	if hc.Transport == nil {
		t, ok = http.DefaultTransport.(*http.Transport), true
	}
	if !ok {
		return hc
	}
	t = t.Clone()
	t.ForceAttemptHTTP2 = false
	t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	if t.TLSClientConfig != nil {
		t.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	return &http.Client{Transport: t, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar}
}
