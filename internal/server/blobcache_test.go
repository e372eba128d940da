package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
)

// A blob read with credentials (the studio's session cookie, a token) may be cached by the
// browser that read it, never by a shared cache between it and the server.
func TestBlobAnswersArePrivate(t *testing.T) {
	ts := newTestServer(t)
	body := "weights"
	sum := sha256.Sum256([]byte(body))
	path := "/api/blobs/" + hex.EncodeToString(sum[:])
	if st, eb := ts.raw(t, adminToken, http.MethodPut, path, body); st/100 != 2 {
		t.Fatalf("put blob: %d %v", st, eb)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "private") || strings.Contains(cc, "public") {
		t.Errorf("Cache-Control %q, want private", cc)
	}
}
