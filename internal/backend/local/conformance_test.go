package local_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/backend/local"
	"github.com/hangar-ml/hangar/internal/compute"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// The local backend passes the conformance suite with real `hangar supervise` processes on this
// machine reporting to the suite's workspace.
func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, ws *backendtest.Workspace) *backendtest.Engine {
		exe, root := backendtest.Binary(t), t.TempDir()
		return &backendtest.Engine{
			Target: compute.Target{Name: "local", Type: compute.TypeLocal},
			New: func() backend.Backend {
				return &local.Backend{Root: root, Exe: exe, ServerURL: func() string { return ws.URL },
					BlobDir: ws.Blobs.Dir(), Hide: []string{root}, Log: slog.New(slog.DiscardHandler)}
			},
		}
	})
}
