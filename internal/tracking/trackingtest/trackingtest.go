// Package trackingtest finds, for tests, the MLflow client nobody here wrote: the npm package
// mlflow@2.0.7 that scripts/setup/mlflow-js.sh installs (PyPI is not reachable here).
package trackingtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeClientVersion is the version of the npm mlflow package the tests use.
const NodeClientVersion = "2.0.7"

// NodeClientDir returns the directory holding node_modules/mlflow ($MLFLOW_JS_DIR, else the
// setup script's cache directory). Without it, or without node, the test skips, except under
// CI, where a missing client is a failure.
func NodeClientDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("MLFLOW_JS_DIR")
	if dir == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(cache, "hangar", "mlflow-js-"+NodeClientVersion)
		}
	}
	_, err := os.Stat(filepath.Join(dir, "node_modules", "mlflow", "package.json"))
	_, nodeErr := exec.LookPath("node")
	if err != nil || nodeErr != nil {
		msg := "the MLflow Node client is not installed (run bash scripts/setup/mlflow-js.sh): " + dir
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}
