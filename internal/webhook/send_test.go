package webhook

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A delivery's POST follows no redirect (the 3xx is its answer), reads at most
// MaxResponseBody of an answer, and ends at its timeout; only http and https URLs are sent to.
func TestSenderStaysBare(t *testing.T) {
	var reachedTarget bool
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reachedTarget = true }))
	defer target.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(strings.Repeat("x", 1<<20))) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s := NewSender(200 * time.Millisecond)
	req := func(path string) Request {
		return Request{URL: srv.URL + path, DeliveryID: "d", Body: []byte(`{}`), At: time.Now()}
	}
	ctx := t.Context()
	if resp, err := s.Send(ctx, req("/redirect")); err != nil || resp.Status != http.StatusTemporaryRedirect || reachedTarget {
		t.Errorf("redirect: %+v, %v, reached the target: %v", resp, err, reachedTarget)
	}
	if resp, err := s.Send(ctx, req("/big")); err != nil || len(resp.Body) != MaxResponseBody {
		t.Errorf("big answer: %d bytes read, %v", len(resp.Body), err)
	}
	start := time.Now()
	if _, err := s.Send(ctx, req("/slow")); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("slow receiver: %v after %v; want a timeout", err, time.Since(start))
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://example.com/x", "http://", "/relative", "gopher://h/"} {
		if _, err := s.Send(ctx, Request{URL: bad, At: time.Now()}); err == nil {
			t.Errorf("Send(%s) went", bad)
		}
		if CheckURL(bad) == nil {
			t.Errorf("CheckURL(%s) takes it", bad)
		}
	}
}
