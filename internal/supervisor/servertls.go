package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
)

// ServerCAFile is where, in the run directory, a supervisor of an https server writes the
// server's certificate for the run's own clients (MLflow's, `hangar mpi-rsh`).
const ServerCAFile = "server-ca.pem"

// prepareServerCA writes the certificate the supervisor trusts beside the run and points the
// run's clients at it: MLflow's Python client verifies with MLFLOW_TRACKING_SERVER_CERT_PATH;
// Hangar's own (mpi-rsh) with HANGAR_SERVER_CA_FILE. Without TLS there is nothing to do.
func (s *Supervisor) prepareServerCA(extra map[string]string) error {
	if s.cfg.ServerCA == "" {
		return nil
	}
	p := filepath.Join(s.cfg.Dir, "hangar", ServerCAFile)
	if err := os.WriteFile(p, []byte(s.cfg.ServerCA), 0o644); err != nil {
		return fmt.Errorf("write the server's certificate: %w", err)
	}
	extra["MLFLOW_TRACKING_SERVER_CERT_PATH"] = p
	extra["HANGAR_SERVER_CA_FILE"] = p
	return nil
}
