package backendtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var static struct {
	once      sync.Once
	dir, path string
	err       error
}

// StaticBinary builds hangar without cgo (it runs in any image, as the supervisor of a pod) into
// a directory of its own, which a pod can mount; it returns that directory.
func StaticBinary(t testing.TB) string {
	t.Helper()
	static.once.Do(func() {
		static.dir, static.err = os.MkdirTemp("", "hangar-static-")
		if static.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(static.dir, "hangar"), "github.com/hangar-ml/hangar/cmd/hangar")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			static.err = fmt.Errorf("go build hangar (static): %v\n%s", err, out)
		}
		_ = os.Chmod(static.dir, 0o755)
	})
	if static.err != nil {
		t.Fatal(static.err)
	}
	return static.dir
}
