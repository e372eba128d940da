package backendtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// SlurmConf returns the slurm.conf of the project's test cluster (scripts/setup/slurm.sh: nodes
// hangar-n1 and hangar-n2 on this machine, partitions debug and one_node): $SLURM_CONF, else the
// setup script's default. It skips the test when no such cluster answers there; with CI set it
// fails instead (integration tests never skip silently in CI).
func SlurmConf(t testing.TB) string {
	t.Helper()
	conf := os.Getenv("SLURM_CONF")
	if conf == "" {
		conf = filepath.Join(TestState(), "slurm", "slurm.conf")
	}
	cmd := exec.Command("sinfo", "--noheader", "--format=%R")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.CombinedOutput()
	if err == nil && strings.Contains(string(out), "debug") && strings.Contains(string(out), "one_node") {
		return conf
	}
	Unavailable(t, fmt.Sprintf("this test needs the Slurm test cluster (bash scripts/setup/slurm.sh; SLURM_CONF=%s): %v %s", conf, err, out))
	return ""
}

// TestState is where the project's setup scripts keep their test clusters:
// $HANGAR_TEST_STATE, else /var/tmp/hangar-test.
func TestState() string {
	if state := os.Getenv("HANGAR_TEST_STATE"); state != "" {
		return state
	}
	return "/var/tmp/hangar-test"
}

// Unavailable skips t, which needs what msg says and does not have it; with CI set it fails t
// instead (integration tests never skip silently in CI).
func Unavailable(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: integration tests must not skip)")
	}
	t.Skip(msg)
}
