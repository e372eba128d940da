package e2e

import (
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// hangProxy is a TCP port in front of a real sshd: it forwards until hang is called, then it
// accepts every connection and never answers (a VM whose SSH port is open and whose sshd is
// stuck), and cuts the connections it had forwarded.
type hangProxy struct {
	ln   net.Listener
	to   string
	mu   sync.Mutex
	hung bool
	open []net.Conn
}

func startHangProxy(t *testing.T, to string) *hangProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &hangProxy{ln: ln, to: to}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.open {
			c.Close()
		}
	})
	go p.serve()
	return p
}

func (p *hangProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *hangProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.open = append(p.open, c)
		hung := p.hung
		p.mu.Unlock()
		if !hung {
			go p.forward(c)
		} // else: held open, never read nor answered
	}
}

func (p *hangProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.to)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.open = append(p.open, up)
	p.mu.Unlock()
	go func() { io.Copy(up, c); up.Close() }()
	io.Copy(c, up)
	c.Close()
}

func (p *hangProxy) hang() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hung = true
	for _, c := range p.open {
		c.Close()
	}
	p.open = nil
}

// localJobs runs one-line jobs on local one after another, to their end, and returns how long
// that took.
func localJobs(t *testing.T, w *ws, file string, n int) time.Duration {
	t.Helper()
	start := time.Now()
	for i := 0; i < n; i++ {
		if r := w.ok("job", "create", "-f", file, "--stream"); !strings.Contains(r.stdout, "hi from local") {
			t.Fatalf("local job %d: %s %s", i, r.stdout, r.stderr)
		}
	}
	return time.Since(start)
}

// A VM whose SSH port accepts and never answers, beside the local target: one-line jobs on
// local take about as long as without it; the VM's run stays Queued with the reason, `compute
// show` and `compute list` say the VM is unreachable, and the run fails with that reason once
// --unreachable-limit has passed.
func TestHungTargetDoesNotDelayLocal(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	proxy := startHangProxy(t, net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
	w := newWS(t, "--unreachable-limit", "30s")
	dir := t.TempDir()
	via := *srv
	via.Port = proxy.port()
	writeFiles(t, dir, map[string]string{
		"vm.yml":    vmYAML("vm", &via, srv.KeyFile, filepath.Join(t.TempDir(), "vm-work")),
		"vmjob.yml": "command: echo hi from the vm\ncompute: vm\n",
		"local.yml": "command: echo hi from local\ncompute: local\n",
	})
	const n = 3
	baseline := localJobs(t, w, filepath.Join(dir, "local.yml"), n)

	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml")) // verified through the proxy
	proxy.hang()
	vmJob := w.create(filepath.Join(dir, "vmjob.yml"))
	beside := localJobs(t, w, filepath.Join(dir, "local.yml"), n)
	// Before, the loop waited for the VM's SSH handshake (15 s) before handing on a local job.
	if limit := 2*baseline + 3*time.Second; beside > limit {
		t.Errorf("%d local jobs beside the hung VM took %s; without it %s (limit %s)", n, beside, baseline, limit)
	}

	d := w.waitStatus(vmJob, time.Minute, job.Queued, job.Failed)
	testwait.Within(t, time.Minute, "the VM's run to show why it waits", func() bool {
		d = w.show(vmJob)
		return d.Status != job.Queued || strings.Contains(d.StatusReason, "unreachable")
	})
	if d.Status != job.Queued || !strings.HasPrefix(d.StatusReason, "host vm unreachable since ") ||
		!strings.Contains(d.StatusReason, "SSH handshake timed out") {
		t.Fatalf("VM's run: %s %q, want Queued, host vm unreachable since ...: SSH handshake timed out", d.Status, d.StatusReason)
	}
	show := w.ok("compute", "show", "-n", "vm").stdout
	if !strings.Contains(show, "unreachable since ") || !strings.Contains(show, "SSH handshake timed out") {
		t.Errorf("compute show does not say the VM is unreachable:\n%s", show)
	}
	if list := w.ok("compute", "list").stdout; !strings.Contains(list, "unreachable since ") {
		t.Errorf("compute list does not say the VM is unreachable:\n%s", list)
	}

	d = w.waitStatus(vmJob, 2*time.Minute, job.Failed, job.Completed, job.Canceled)
	if d.Status != job.Failed || !strings.HasPrefix(d.StatusReason, "host vm unreachable since ") ||
		!strings.Contains(d.StatusReason, "--unreachable-limit") {
		t.Errorf("after --unreachable-limit: %s %q, want Failed with the reason; compute show now:\n%s", d.Status, d.StatusReason,
			w.ok("compute", "show", "-n", "vm").stdout)
	}
}
