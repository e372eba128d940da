package replica

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

func TestTrustTakesTheCallersAddressOnlyWithTheKey(t *testing.T) {
	key := forwardKey([]byte("workspace secret"))
	tests := []struct {
		name     string
		by, addr string
		want     string
	}{
		{"not forwarded", "", "", "192.0.2.1:1000"},
		{"forwarded by a server of the workspace", key, "198.51.100.7:4242", "198.51.100.7:4242"},
		{"a forged key", strings.Repeat("0", len(key)), "198.51.100.7:4242", "192.0.2.1:1000"},
		{"the key of another workspace", forwardKey([]byte("another")), "198.51.100.7:4242", "192.0.2.1:1000"},
		{"an address without a port", key, "198.51.100.7", "192.0.2.1:1000"},
		{"a key without an address", key, "", "192.0.2.1:1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			var leaked []string
			h := trust(func() string { return key }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.RemoteAddr
				for _, hd := range []string{forwardedByHeader, clientAddrHeader} {
					if r.Header.Get(hd) != "" {
						leaked = append(leaked, hd)
					}
				}
			}))
			r := httptest.NewRequest(http.MethodGet, "/api/jobs", nil)
			r.RemoteAddr = "192.0.2.1:1000"
			if tt.by != "" {
				r.Header.Set(forwardedByHeader, tt.by)
			}
			if tt.addr != "" {
				r.Header.Set(clientAddrHeader, tt.addr)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tt.want || len(leaked) > 0 {
				t.Errorf("RemoteAddr = %q (want %q); headers passed on: %v", got, tt.want, leaked)
			}
		})
	}
}

// A follower's forwarder passes the request and its answer whole, vouches for the caller's
// address (a caller's own forwarding headers are replaced, never passed), keeps the Host the
// caller used, and answers 503 while no leader is known or the leader cannot be reached.
func TestForwarder(t *testing.T) {
	key := forwardKey([]byte("s"))
	var seen struct{ addr, host, body, auth string }
	leader := httptest.NewServer(trust(func() string { return key }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen.addr, seen.host, seen.body, seen.auth = r.RemoteAddr, r.Host, string(b), r.Header.Get("Authorization")
		w.Header().Set("X-Answer", "yes")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "made")
	})))
	defer leader.Close()
	leaderURL := leader.URL
	told := 0
	f, err := newForwarder(func() string { return leaderURL }, func() string { return key }, func() { told++ }, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "http://follower.example:8700/api/jobs", strings.NewReader("spec"))
	r.RemoteAddr = "203.0.113.9:5555"
	r.Header.Set("Authorization", "Bearer tok")
	r.Header.Set(forwardedByHeader, "forged")
	r.Header.Set(clientAddrHeader, "10.0.0.1:1")
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, r)
	if rec.Code != http.StatusCreated || rec.Body.String() != "made" || rec.Header().Get("X-Answer") != "yes" {
		t.Errorf("answer: %d %q %v", rec.Code, rec.Body.String(), rec.Header())
	}
	if seen.addr != "203.0.113.9:5555" || seen.host != "follower.example:8700" || seen.body != "spec" || seen.auth != "Bearer tok" {
		t.Errorf("the leader saw %+v", seen)
	}

	f.self = "http://follower.example:8700"
	for name, url := range map[string]string{"no leader known": "", "the leader is down": "http://127.0.0.1:1", "itself": f.self} {
		leaderURL = url
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/jobs", nil))
		var eb api.ErrorBody
		if rec.Code != http.StatusServiceUnavailable || json.Unmarshal(rec.Body.Bytes(), &eb) != nil || eb.Code != "leader_unavailable" {
			t.Errorf("%s: %d %s", name, rec.Code, rec.Body.String())
		}
	}
	if told != 3 {
		t.Errorf("the follower was told %d times that the leader could not be reached, want 3", told)
	}
}
