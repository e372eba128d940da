package server

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/hangar-ml/hangar/internal/api"
)

// confineServiceAddrs keeps the server from proxying to anything but the node itself: the
// Jupyter and SSH servers an agent reports are where the server's proxies connect, so an address
// whose host is not the one the agent's own heartbeat came from (remote, the request's
// RemoteAddr) is not taken; the report becomes a failure saying why. A node's agent could
// otherwise point the server at another machine or a service of the server's own network.
func confineServiceAddrs(act *api.NodeActivity, remote string) {
	if act == nil {
		return
	}
	if j := act.Jupyter; j != nil && j.Addr != "" {
		if err := sameHost(j.Addr, remote); err != nil {
			act.Jupyter = &api.JupyterReport{State: api.JupyterFailed, Reason: err.Error()}
		}
	}
	if s := act.SSH; s != nil && s.Addr != "" {
		if err := sameHost(s.Addr, remote); err != nil {
			act.SSH = &api.SSHReport{State: api.SSHFailed, Reason: err.Error()}
		}
	}
}

// sameHost checks that addr (host:port) names the host the request came from.
func sameHost(addr, remote string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("reported address %q is not host:port", addr)
	}
	rhost, _, err := net.SplitHostPort(remote)
	if err != nil {
		rhost = remote
	}
	a, errA := netip.ParseAddr(host)
	b, errB := netip.ParseAddr(rhost)
	if errA != nil || errB != nil || a.Unmap().WithZone("") != b.Unmap().WithZone("") {
		return fmt.Errorf("reported address %s is not the node's own (its agent reaches the server from %s)", addr, rhost)
	}
	return nil
}
