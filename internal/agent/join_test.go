package agent_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/hangar-ml/hangar/internal/agent"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// A join answered 429 (Too Many Requests: come back later) is retried, as the supervisor does,
// rather than taken as a refusal that ends the agent.
func TestAgentJoinRetriesWhenThrottled(t *testing.T) {
	s := newServer(t)
	id, tok := newNode(t, s)
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	var throttled atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/agents/join" && throttled.Add(1) == 1 {
			http.Error(w, `{"error":"slow down"}`, http.StatusTooManyRequests)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	s.url = front.URL
	r := start(t, s, agent.Config{JoinToken: tok, NodeID: id})
	waitNode(t, s, id, "to join after a 429", func(n *store.Node) bool { return n.State == compute.NodeIdle })
	select {
	case err := <-r.errc:
		t.Fatalf("the agent ended: %v", err)
	default:
	}
	if throttled.Load() < 2 {
		t.Errorf("join calls %d, want the 429 and a retry", throttled.Load())
	}
}
