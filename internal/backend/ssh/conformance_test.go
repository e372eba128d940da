package ssh_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/backend/ssh"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// The SSH backend passes the conformance suite against a real sshd: hangar installed over SFTP,
// the code seeded into the host's cache, supervisors reporting through the reverse tunnel.
func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, ws *backendtest.Workspace) *backendtest.Engine {
		srv := sshtest.Start(t, sshtest.Options{})
		key, err := os.ReadFile(srv.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		target := backendtest.Target(t, compute.Spec{Name: "vm", Type: compute.TypeSSH, SSH: &compute.SSHSpec{
			SSHHost: compute.SSHHost{Host: srv.Host, Port: srv.Port, AdminUsername: srv.User, PrivateKey: string(key),
				HostKey: srv.HostKey(), WorkDir: t.TempDir()}}})
		exe := backendtest.Binary(t)
		return &backendtest.Engine{
			Target: target,
			New: func() backend.Backend {
				return &ssh.Backend{ServerURL: func() string { return "http://" + ws.Addr() }, Exe: exe, Targets: backendtest.Resolver(target), Blobs: ws.Blobs,
					Log: slog.New(slog.DiscardHandler)}
			},
		}
	})
}
