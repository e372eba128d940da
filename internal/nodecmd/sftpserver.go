package nodecmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pkg/sftp"
	"github.com/spf13/cobra"
)

// newSFTPServerCmd is `hangar agent sftp-server`: the sftp subsystem of a compute instance's SSH
// server (internal/agent), which runs it in the sessions' sandbox, on the session's stdin and
// stdout, so that it sees the node's files as a session's shell does.
func newSFTPServerCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "sftp-server",
		Short:   "Serve SFTP on stdin and stdout (started by the agent's SSH server)",
		Example: "  hangar agent sftp-server",
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serveSFTP(os.Stdin, os.Stdout)
		},
	}
}

// serveSFTP serves one SFTP session until the client ends it.
func serveSFTP(in io.Reader, out io.WriteCloser) error {
	srv, err := sftp.NewServer(struct {
		io.Reader
		io.WriteCloser
	}{in, out})
	if err != nil {
		return fmt.Errorf("sftp server: %w", err)
	}
	if err := srv.Serve(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("sftp server: %w", err)
	}
	return nil
}
