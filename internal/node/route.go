package node

import (
	"fmt"
	"net"
	"net/url"
)

// AddressToward is this machine's address on its route to the server at serverURL (one URL):
// the address its packets to the server leave from, which other machines of its network reach it
// at. No packet is sent (a UDP socket is only connected).
func AddressToward(serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("server URL %q: no host", serverURL)
	}
	port := u.Port()
	if port == "" {
		port = "443" // any port: only the route is looked up
	}
	c, err := net.Dial("udp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return "", fmt.Errorf("route to the server: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}
