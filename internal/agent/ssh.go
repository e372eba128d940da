package agent

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/node"
)

// A compute instance's SSH server: while the server's heartbeat replies name authorized keys
// (HeartbeatReply.SSHAuthorizedKeys: the instance's ssh_settings.ssh_key_value, with
// ssh_public_access_enabled), the agent runs an SSH server of its own (ssh_server.go) on a free
// port of the address the server reaches this node at, and reports that address and its host
// key; the workspace server pipes `hangar compute connect-ssh` to it. Every session's commands
// run in the runs' box (ssh_session.go), as Jupyter's kernels do.

// sshService is the agent's SSH server, wanted or not.
type sshService struct {
	log       *slog.Logger
	workDir   string
	serverURL string
	// hide are the directories sessions must not see (as runs and Jupyter must not); files is the
	// directory sessions start in (shown again: the instance's files, as Jupyter's notebooks).
	hide  []string
	files string
	// sftp is the command that serves the sftp subsystem on its stdin and stdout, run in the box.
	sftp []string

	service[api.SSHReport]
	keys string // the authorized keys asked for; "" none
	srv  *sshServer
}

func newSSHService(workDir, serverURL string, hide, sftp []string, log *slog.Logger) *sshService {
	return &sshService{log: log, workDir: workDir, serverURL: serverURL, hide: hide,
		files: filepath.Join(workDir, "notebooks"), sftp: sftp}
}

// want starts or stops the SSH server to match the keys the server asks for; new keys apply to
// the next connections of a running server.
func (s *sshService) want(keys string) {
	s.mu.Lock()
	same, srv := keys == s.keys, s.srv
	s.mu.Unlock()
	if same {
		return
	}
	if keys != "" && srv != nil && srv.setKeys(keys) == nil {
		s.mu.Lock()
		s.keys = keys
		s.mu.Unlock()
		return
	}
	// No server yet, no keys, or keys it cannot read: a new one, which says why it fails (the
	// old keys are not admitted a moment longer).
	s.stop()
	if keys == "" {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.keys, s.cancel, s.done = keys, cancel, make(chan struct{})
	done := s.done
	s.mu.Unlock()
	go func() {
		defer close(done)
		s.keep(ctx, keys)
	}()
}

// stop closes the SSH server, ends its sessions and what they left running, and waits.
func (s *sshService) stop() { s.halt(func() { s.keys = "" }) }

// keep runs the SSH server until ctx ends, starting it again (with a growing wait) when it
// cannot listen or its box cannot be opened.
func (s *sshService) keep(ctx context.Context, keys string) {
	backoff := api.Backoff{Base: 2 * time.Second, Max: time.Minute}
	for ctx.Err() == nil {
		err := s.serve(ctx, keys)
		if ctx.Err() != nil {
			return
		}
		s.set(&api.SSHReport{State: api.SSHFailed, Reason: err.Error()})
		s.log.Warn("ssh server stopped; starting it again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Next()):
		}
	}
}

// serve runs one SSH server on the node's reachable address until ctx ends or it fails.
func (s *sshService) serve(ctx context.Context, keys string) error {
	ip, err := node.AddressToward(api.FirstURL(s.serverURL))
	if err != nil {
		return err
	}
	hostKey, err := loadHostKey(filepath.Join(s.workDir, "ssh_host_ed25519_key"))
	if err != nil {
		return err
	}
	box, err := openSessionBox(ctx, s.workDir, s.files, s.hide, s.sftp, s.log)
	if err != nil {
		return err
	}
	defer box.End(context.WithoutCancel(ctx)) // what sessions left running ends with the server
	srv, err := newSSHServer(hostKey, keys, s.files, box, s.sftp, s.log)
	if err != nil {
		return err
	}
	if err := srv.listen(ip); err != nil {
		return err
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.srv = nil
		s.mu.Unlock()
	}()
	s.set(&api.SSHReport{State: api.SSHRunning, Addr: srv.addr(), HostKey: srv.hostKeyLine()})
	return srv.serve(ctx)
}

// take is the report to send, whether it changed since the last one taken, and the number of
// sessions open now.
func (s *sshService) take() (r *api.SSHReport, changed bool, sessions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, changed = s.taken()
	if s.srv != nil {
		sessions = s.srv.sessions()
	}
	return r, changed, sessions
}

// sshActivity adds the SSH server's report, and its open sessions, to the activity report,
// sending one now when the server's state changed (the workspace server learns at once where
// to connect).
func (a *Agent) sshActivity(act *api.NodeActivity) *api.NodeActivity {
	r, changed, sessions := a.ssh.take()
	if act == nil && changed {
		a.activity.last = time.Time{}
		act = a.activity.report(a.cfg.Now())
		act.Jupyter, _ = a.jupyter.take()
	}
	if act != nil {
		act.SSH = r
		act.SSHSessions += sessions
	}
	return act
}
