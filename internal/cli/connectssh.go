package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

const connectSSHHelp = `Open an SSH session on a compute instance with the system's OpenSSH client (ssh).

The instance needs ssh_public_access_enabled: true and your public key in
ssh_settings.ssh_key_value; its agent then runs an SSH server that admits that key only. The
connection goes through the workspace server (no address of the node is needed): ssh's
ProxyCommand is this hangar binary with --stdio, which opens GET /instances/NAME/ssh with your
credentials (the instance's owner and workspace owners may). The instance's host key, from
compute show, is written to a known_hosts file in hangar's configuration directory and pinned.

Arguments after -- go to ssh: options (-i KEY, -o ...) and a remote command (port forwarding
is refused). scp and sftp work through the same ProxyCommand (docs/instances.md shows how).
The exit status is ssh's: the remote command's, or 255 when ssh failed.`

// newConnectSSHCmd is `hangar compute connect-ssh NAME [-- SSH_ARGS...]`.
func newConnectSSHCmd(env *Env) *cobra.Command {
	var stdio bool
	cmd := &cobra.Command{
		Use:   "connect-ssh NAME [-- SSH_ARGS...]",
		Short: "Open an SSH session on a compute instance (through the workspace server)",
		Long:  connectSSHHelp,
		Example: `  hangar compute connect-ssh dev1
  hangar compute connect-ssh dev1 -- -i ~/.ssh/id_ed25519 nvidia-smi`,
		Args: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); len(args) == 0 || n == 0 || n > 1 || n < 0 && len(args) > 1 {
				return usageError("give the compute instance's name, then -- and ssh's arguments if any")
			}
			return nil
		},
		ValidArgsFunction: env.completer(computeNames),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if stdio {
				return env.sshStdio(cmd.Context(), c, args[0])
			}
			return env.connectSSH(cmd.Context(), c, args[0], args[1:])
		}),
	}
	cmd.Flags().BoolVar(&stdio, "stdio", false, "connect stdin and stdout to the instance's SSH server (ssh's ProxyCommand)")
	_ = cmd.Flags().MarkHidden("stdio")
	return cmd
}

// connectSSH pins the instance's host key and runs ssh through the workspace server.
func (e *Env) connectSSH(ctx context.Context, c *api.Client, name string, extra []string) error {
	in, err := c.Instances.Get(ctx, name)
	if err != nil {
		return err
	}
	if in.SSHHostKey == "" {
		return fmt.Errorf("compute instance %s: SSH is %s", name, in.SSH)
	}
	sshPath, err := exec.LookPath("ssh")
	if err != nil {
		return errors.New("no ssh on the PATH: install OpenSSH's client (the openssh-client package)")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary: %w", err)
	}
	known, err := writeKnownHost(name, in.SSHHostKey)
	if err != nil {
		return err
	}
	argv, err := sshArgv(sshCall{Exe: self, Workspace: e.Workspace, Name: name, KnownHosts: known, Extra: extra})
	if err != nil {
		return err
	}
	ssh := exec.Command(sshPath, argv...)
	ssh.Stdin, ssh.Stdout, ssh.Stderr = e.stdin(), e.Stdout, e.Stderr
	err = ssh.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &ExitError{Code: ee.ExitCode()} // ssh said why (or it is the remote command's status)
	}
	if err != nil {
		return fmt.Errorf("run ssh: %w", err)
	}
	return nil
}

// sshCall is what the ssh command line is made of.
type sshCall struct {
	Exe, Workspace, Name, KnownHosts string
	Extra                            []string
}

// sshAlias is the name an instance's host key is pinned under.
func sshAlias(name string) string { return "hangar-instance-" + name }

// sshArgv is ssh's arguments (after "ssh"): the ProxyCommand, the pinned host key, the login
// name, then the caller's arguments (OpenSSH reads options after the destination too, and the
// first other argument starts the remote command). Nothing goes through a shell here; the
// ProxyCommand line, which ssh gives to the user's shell, is refused unless every word in it
// is made of characters no shell or ssh treats specially.
func sshArgv(c sshCall) ([]string, error) {
	proxy := []string{c.Exe}
	if c.Workspace != "" {
		proxy = append(proxy, "--workspace", c.Workspace)
	}
	proxy = append(proxy, "compute", "connect-ssh", c.Name, "--stdio")
	for _, w := range proxy {
		if !proxySafe(w) {
			return nil, fmt.Errorf("cannot hand %q to ssh's ProxyCommand (ssh runs it with a shell): use only letters, digits and / . _ - + , : @ = in the hangar binary's path, the workspace URL and the instance name", w)
		}
	}
	alias := sshAlias(c.Name)
	argv := []string{
		"-o", "ProxyCommand=" + strings.Join(proxy, " "),
		"-o", "UserKnownHostsFile=" + c.KnownHosts,
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "HostKeyAlias=" + alias,
		"-o", "StrictHostKeyChecking=yes",
		"-o", "CheckHostIP=no",
		"-l", c.Name,
		alias,
	}
	return append(argv, c.Extra...), nil
}

// proxySafe reports whether s is one word to a shell and has no ssh % token.
func proxySafe(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("/._-+,:@=", r):
		default:
			return false
		}
	}
	return true
}

// writeKnownHost pins an instance's host key: its line (under sshAlias) in
// <config dir>/hangar/ssh_known_hosts replaced, other instances' lines kept.
func writeKnownHost(name, hostKey string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("known hosts: %w", err)
	}
	path := filepath.Join(dir, "hangar", "ssh_known_hosts")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("known hosts: %w", err)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("known hosts: %w", err)
	}
	data, err := knownHostsWith(string(old), sshAlias(name), hostKey)
	if err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		return "", fmt.Errorf("known hosts: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("known hosts: %w", err)
	}
	return path, nil
}

// knownHostsWith is a known_hosts file's text with alias's line set to key.
func knownHostsWith(old, alias, key string) (string, error) {
	key = strings.TrimSpace(key)
	if f := strings.Fields(key); len(f) < 2 || strings.ContainsAny(key, "\n\r") {
		return "", fmt.Errorf("the instance's host key %q is not a public key line", key)
	}
	var out []string
	for _, l := range strings.Split(old, "\n") {
		if l == "" || strings.HasPrefix(l, alias+" ") {
			continue
		}
		out = append(out, l)
	}
	out = append(out, alias+" "+key)
	return strings.Join(out, "\n") + "\n", nil
}

// sshStdio is ssh's ProxyCommand: stdin and stdout to the instance's SSH server, through the
// workspace server, until either side ends.
func (e *Env) sshStdio(ctx context.Context, c *api.Client, name string) error {
	conn, err := c.Instances.ConnectSSH(ctx, name)
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, e.stdin()); done <- struct{}{} }()
	go func() { _, _ = io.Copy(e.Stdout, conn); done <- struct{}{} }()
	<-done
	return nil
}
