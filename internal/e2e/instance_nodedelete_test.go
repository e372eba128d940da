package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/testwait"
)

// compute node delete on a compute instance whose node comes from the command provider runs the
// instance's delete hook (issue 17), as it does for a cluster's node, rather than asking the
// local provider, which knows nothing of the machine.
func TestInstanceNodeDeleteUsesItsProvider(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	t.Cleanup(func() { killMatching(dir) }) // agents the hooks started (work dirs under TMPDIR=dir)
	hooks := filepath.Join(repoRoot(t), "examples", "cluster", "local-agent")
	marker := filepath.Join(dir, "deleted-by-hook")
	writeFiles(t, dir, map[string]string{"dev.yml": fmt.Sprintf(`name: dev2
type: computeinstance
size: local-quarter
provider:
  type: command
  create: %s
  delete: %s && touch %s
  timeout: 60
  env:
    HANGAR_EXE: %s
    TMPDIR: %s
`, filepath.Join(hooks, "create.sh"), filepath.Join(hooks, "delete.sh"), marker, hangarBin, dir)})
	w.ok("compute", "create", "-f", filepath.Join(dir, "dev.yml"))
	in := w.waitInstance("dev2", 2*time.Minute, "Running")
	if in.Node == "" {
		t.Fatalf("a running instance without a node: %+v", in)
	}
	w.ok("compute", "node", "delete", "-n", in.Node, "--yes")
	testwait.Within(t, time.Minute, "the instance's delete hook to run", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	w.ok("compute", "stop", "dev2")
	w.waitInstance("dev2", time.Minute, "Stopped")
}
