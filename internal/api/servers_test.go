package api

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestSplitURLs(t *testing.T) {
	tests := map[string][]string{
		"":                             nil,
		"http://a:1":                   {"http://a:1"},
		"http://a:1/, https://b:2 ,,":  {"http://a:1", "https://b:2"},
		" https://a:1,https://a:1/x/ ": {"https://a:1", "https://a:1/x"},
	}
	for in, want := range tests {
		if got := SplitURLs(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitURLs(%q) = %q, want %q", in, got, want)
		}
	}
	if got := FirstURL("http://a:1,http://b:2"); got != "http://a:1" {
		t.Errorf("FirstURL = %q", got)
	}
}

// A client given several servers moves on from one it cannot reach, and keeps the one it uses
// when the list changes (a heartbeat reply's).
func TestClientMovesToTheNextServer(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer up.Close()
	down := "http://127.0.0.1:1"
	c := NewClient(down+","+up.URL, "tok")
	if c.BaseURL() != down {
		t.Fatalf("first address = %q", c.BaseURL())
	}
	if _, err := c.Health(t.Context()); err == nil {
		t.Fatal("the unreachable server answered")
	}
	if c.BaseURL() != up.URL {
		t.Fatalf("after a call got no answer the client uses %q, want %q", c.BaseURL(), up.URL)
	}
	if _, err := c.Health(t.Context()); err != nil {
		t.Fatalf("the next server: %v", err)
	}

	c.Unreachable(down + "/api/health") // a late report about a server no longer in use: ignored
	if c.BaseURL() != up.URL {
		t.Errorf("a stale report moved the client to %q", c.BaseURL())
	}
	c.SetServers("http://c:3," + up.URL)
	if c.BaseURL() != up.URL {
		t.Errorf("a new list that has the server in use moved the client to %q", c.BaseURL())
	}
	c.SetServers("http://c:3,http://d:4")
	if c.BaseURL() != "http://c:3" {
		t.Errorf("a list without the server in use: %q", c.BaseURL())
	}
	c.Unreachable("http://c:3/api/x")
	if c.BaseURL() != "http://d:4" {
		t.Errorf("after c: %q", c.BaseURL())
	}
	c.Unreachable("http://d:4/api/x")
	if c.BaseURL() != "http://c:3" {
		t.Errorf("after the last, back to the first: %q", c.BaseURL())
	}

	tunnel := NewClient("http://127.0.0.1:40001", "tok") // an SSH tunnel's address, say
	if tunnel.SetServers("http://a:1,http://b:2") || tunnel.BaseURL() != "http://127.0.0.1:40001" {
		t.Errorf("a client reaching the servers through another address took their list: %q", tunnel.BaseURL())
	}

	one := NewClient(down, "tok") // a single server: nothing to move to
	_, _ = one.Health(t.Context())
	if one.BaseURL() != down {
		t.Errorf("a single-server client moved to %q", one.BaseURL())
	}
}
