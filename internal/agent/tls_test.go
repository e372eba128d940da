package agent_test

import (
	"encoding/pem"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/agent"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// An agent of an https server joins and heartbeats trusting the certificate it was given
// ($HANGAR_JOIN_CA).
func TestAgentJoinsOverTLS(t *testing.T) {
	s := newServer(t)
	id, tok := newNode(t, s)
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(front.Close)
	s.url = front.URL
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw})
	start(t, s, agent.Config{JoinToken: tok, NodeID: id, ServerCA: ca})
	waitNode(t, s, id, "to join over TLS", func(n *store.Node) bool { return n.State == compute.NodeIdle })
}

func TestAgentRefusesBadServerCA(t *testing.T) {
	_, err := agent.New(t.Context(), agent.Config{ServerURL: "https://x", WorkDir: t.TempDir(), Exe: "hangar",
		Machine: &compute.NodeInfo{Cores: 1}, ServerCA: []byte("junk")}, nil)
	if err == nil || !strings.Contains(err.Error(), "HANGAR_JOIN_CA") {
		t.Fatalf("agent with a bad CA: %v", err)
	}
}
