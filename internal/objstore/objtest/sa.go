package objtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
)

// ServiceAccountJSON is a Google service account key file whose token endpoint is a local server
// of the test's: it grants a token when grant is set, else it refuses the key as Google's does.
func ServiceAccountJSON(t testing.TB, grant bool) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !grant {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`))
			return
		}
		w.Write([]byte(`{"access_token":"objtest-token","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(srv.Close)
	b, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "objtest",
		"private_key_id": "objtest-key",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "objtest@objtest.iam.gserviceaccount.com",
		"client_id":      "1",
		"token_uri":      srv.URL + "/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
