package supervisor

import (
	"context"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// A supervisor of an https server trusts the certificate in its config, and only it.
func TestSupervisorVerifiesServer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	newSup := func(ca string) (*Supervisor, error) {
		dir := t.TempDir()
		return New(api.SupervisorConfig{RunID: "r", Token: "tok", ServerURL: srv.URL, ServerCA: ca, Dir: filepath.Join(dir, "run"),
			CacheDir: filepath.Join(dir, "cache")}, slog.New(slog.DiscardHandler))
	}
	s, err := newSup(ca)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.conn.c.Health(context.Background()); err != nil {
		t.Fatalf("with the server's certificate: %v", err)
	}
	s, err = newSup("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.conn.c.Health(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without it (the system's roots): %v, want a certificate error", err)
	}
	if _, err := newSup("garbage"); err == nil || !strings.Contains(err.Error(), "server_ca") {
		t.Fatalf("a config with a bad server_ca: %v", err)
	}
}

// The run's MLflow client (and mpi-rsh) verify the server with its certificate, written beside
// the run; a job that logs to its own MLflow server does not get it.
func TestServerCAVariables(t *testing.T) {
	const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	for _, tc := range []struct {
		name     string
		ca       string
		own      bool
		wantPath bool
	}{
		{"https server", ca, false, true},
		{"plain http", "", false, false},
		{"the job's own MLflow server", ca, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSupervisor(t, "https://127.0.0.1:4242", 0)
			s.cfg.ServerCA = tc.ca
			if tc.own {
				s.spec.Spec = job.Spec{EnvironmentVariables: map[string]string{"MLFLOW_TRACKING_URI": "https://mlflow.example.com"}}
			}
			if err := os.MkdirAll(filepath.Join(s.cfg.Dir, "hangar"), 0o755); err != nil {
				t.Fatal(err)
			}
			extra := map[string]string{}
			if err := s.prepareServerCA(extra); err != nil {
				t.Fatal(err)
			}
			vars := s.environment.vars(&workspace{dir: t.TempDir()}, extra)
			path, ok := vars["MLFLOW_TRACKING_SERVER_CERT_PATH"]
			if ok != tc.wantPath {
				t.Fatalf("MLFLOW_TRACKING_SERVER_CERT_PATH = %q (set %v), want set %v", path, ok, tc.wantPath)
			}
			if !ok {
				return
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != ca {
				t.Errorf("%s: %q %v", path, b, err)
			}
			if vars["HANGAR_SERVER_CA_FILE"] != path {
				t.Errorf("HANGAR_SERVER_CA_FILE = %q", vars["HANGAR_SERVER_CA_FILE"])
			}
		})
	}
}
