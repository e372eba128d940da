package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// SSHHost is an sshd on loopback started by scripts/setup/sshd.sh, reached through a byte-counting
// proxy so that what Hangar sends to the host can be measured.
type SSHHost struct {
	Dir   string
	Port  int
	proxy *Proxy
}

// StartSSH starts sshd (installing it when missing) with the project's setup script.
func StartSSH(ctx context.Context, repo, dir string) (*SSHHost, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repo, "scripts/setup/sshd.sh"), "--install", "--dir", dir,
		"--port", strconv.Itoa(port), "--start")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("start sshd: %w: %s", err, out)
	}
	p, err := NewProxy(fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	return &SSHHost{Dir: dir, Port: port, proxy: p}, nil
}

// Stop stops sshd.
func (h *SSHHost) Stop(repo string) {
	h.proxy.Close()
	_ = exec.Command("bash", filepath.Join(repo, "scripts/setup/sshd.sh"), "--dir", h.Dir, "--stop").Run()
}

// SSH compares a job running `sleep 1` on an attached VM with `ssh host 'sleep 1'`, interleaved,
// and measures the bytes sent to the host for a 10,000-file tree, first and unchanged.
func SSH(ctx context.Context, w *Workspace, h *SSHHost, dir string, n, files, size int) ([]Row, []Row, error) {
	work := filepath.Join(dir, "vm-work")
	vm := fmt.Sprintf("name: vm\ntype: virtualmachine\naddress: %s\nssh_settings:\n  admin_username: root\n  ssh_private_key_file: %s\nwork_dir: %s\n",
		h.proxy.Addr(), filepath.Join(h.Dir, "client_key"), work)
	files0 := map[string]string{"vm.yml": vm, "sleep.yml": "command: sleep 1\ncompute: vm\n"}
	for name, body := range files0 {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return nil, nil, err
		}
	}
	if _, err := w.Run(ctx, "compute", "attach", "-f", filepath.Join(dir, "vm.yml")); err != nil {
		return nil, nil, err
	}
	sshArgs := []string{"-i", filepath.Join(h.Dir, "client_key"), "-o", "UserKnownHostsFile=" + filepath.Join(h.Dir, "known_hosts"),
		"-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-p", strconv.Itoa(h.Port), "root@127.0.0.1", "sleep 1"}
	if _, err := w.Run(ctx, "job", "create", "-f", filepath.Join(dir, "sleep.yml"), "--stream"); err != nil { // warm up
		return nil, nil, err
	}
	var bare, hangar []time.Duration
	for i := 0; i < n; i++ {
		if err := timeInto(&bare, func() error { return exec.CommandContext(ctx, "ssh", sshArgs...).Run() }); err != nil {
			return nil, nil, fmt.Errorf("ssh: %w", err)
		}
		err := timeInto(&hangar, func() error {
			_, err := w.Run(ctx, "job", "create", "-f", filepath.Join(dir, "sleep.yml"), "--stream")
			return err
		})
		if err != nil {
			return nil, nil, err
		}
	}
	rows := pair("`ssh host 'sleep 1'` directly", bare, "`hangar job create --stream` of `sleep 1` on the attached VM", hangar)
	tree, err := sshTree(ctx, w, h, dir, files, size)
	return rows, tree, err
}

// sshTree submits a code tree to the VM twice and counts the bytes sent to the host each time.
func sshTree(ctx context.Context, w *Workspace, h *SSHHost, dir string, files, size int) ([]Row, error) {
	root := filepath.Join(dir, "vmtree")
	if err := makeTree(filepath.Join(root, "src"), files, size); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(root, "job.yml"), []byte("command: \"true\"\ncode: src\ncompute: vm\n"), 0o644); err != nil {
		return nil, err
	}
	h.proxy.Bytes()
	var rows []Row
	for _, name := range []string{"first submission to the VM", "unchanged resubmission to the VM"} {
		d, err := timeIt(func() error {
			_, err := w.Run(ctx, "job", "create", "-f", filepath.Join(root, "job.yml"), "--stream")
			return err
		})
		if err != nil {
			return nil, err
		}
		rows = append(rows, Row{Name: name + " (bytes = SSH traffic to the host)", Median: d, Samples: []time.Duration{d},
			Bytes: h.proxy.Bytes()})
	}
	rows[1].Baseline, rows[1].Ratio = rows[0].Name, float64(rows[1].Bytes)/float64(rows[0].Bytes)
	return rows, nil
}
