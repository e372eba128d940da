package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSSHArgv(t *testing.T) {
	cases := []struct {
		name    string
		call    sshCall
		want    []string
		wantErr string
	}{
		{
			name: "local workspace, a remote command",
			call: sshCall{Exe: "/usr/local/bin/hangar", Name: "dev1", KnownHosts: "/home/u/.config/hangar/ssh_known_hosts",
				Extra: []string{"-i", "/home/u/.ssh/id", "echo hi; cat /etc/x"}},
			want: []string{
				"-o", "ProxyCommand=/usr/local/bin/hangar compute connect-ssh dev1 --stdio",
				"-o", "UserKnownHostsFile=/home/u/.config/hangar/ssh_known_hosts",
				"-o", "GlobalKnownHostsFile=/dev/null",
				"-o", "HostKeyAlias=hangar-instance-dev1",
				"-o", "StrictHostKeyChecking=yes",
				"-o", "CheckHostIP=no",
				"-l", "dev1", "hangar-instance-dev1",
				"-i", "/home/u/.ssh/id", "echo hi; cat /etc/x",
			},
		},
		{
			name: "a remote workspace is passed on",
			call: sshCall{Exe: "/opt/hangar", Workspace: "https://10.0.0.4:8700", Name: "nb", KnownHosts: "/k"},
			want: []string{
				"-o", "ProxyCommand=/opt/hangar --workspace https://10.0.0.4:8700 compute connect-ssh nb --stdio",
				"-o", "UserKnownHostsFile=/k", "-o", "GlobalKnownHostsFile=/dev/null", "-o", "HostKeyAlias=hangar-instance-nb",
				"-o", "StrictHostKeyChecking=yes", "-o", "CheckHostIP=no", "-l", "nb", "hangar-instance-nb",
			},
		},
		{name: "a path with a space", call: sshCall{Exe: "/home/u/my tools/hangar", Name: "dev1", KnownHosts: "/k"}, wantErr: "ProxyCommand"},
		{name: "a path with a quote", call: sshCall{Exe: "/home/u/it's/hangar", Name: "dev1", KnownHosts: "/k"}, wantErr: "ProxyCommand"},
		{name: "an ssh % token", call: sshCall{Exe: "/home/%h/hangar", Name: "dev1", KnownHosts: "/k"}, wantErr: "ProxyCommand"},
		{name: "shell syntax in the URL", call: sshCall{Exe: "/h", Workspace: "https://x/$(id)", Name: "dev1", KnownHosts: "/k"}, wantErr: "ProxyCommand"},
		{name: "shell syntax in the name", call: sshCall{Exe: "/h", Name: "a;b", KnownHosts: "/k"}, wantErr: "ProxyCommand"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := sshArgv(c.call)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one naming %s (argv %q)", err, c.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Fatalf("argv (-want +got):\n%s", d)
			}
		})
	}
}

func TestKnownHostsWith(t *testing.T) {
	old := "hangar-instance-a ssh-ed25519 AAAAold\nhangar-instance-ab ssh-ed25519 AAAAab\n"
	got, err := knownHostsWith(old, "hangar-instance-a", "ssh-ed25519 AAAAnew\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "hangar-instance-ab ssh-ed25519 AAAAab\nhangar-instance-a ssh-ed25519 AAAAnew\n"
	if got != want {
		t.Fatalf("known hosts %q, want %q", got, want)
	}
	for _, bad := range []string{"", "ssh-ed25519", "ssh-ed25519 AAAA\nhangar-instance-b ssh-rsa AAAA"} {
		if _, err := knownHostsWith("", "hangar-instance-a", bad); err == nil {
			t.Errorf("host key %q accepted", bad)
		}
	}
}

func TestConnectSSHArgs(t *testing.T) {
	cases := []struct {
		args []string
		ok   bool
	}{
		{[]string{"compute", "connect-ssh", "dev1"}, true},
		{[]string{"compute", "connect-ssh", "dev1", "--", "-i", "k", "ls"}, true},
		{[]string{"compute", "connect-ssh"}, false},
		{[]string{"compute", "connect-ssh", "dev1", "ls"}, false},
		{[]string{"compute", "connect-ssh", "--", "dev1"}, false},
	}
	for _, c := range cases {
		root := newRoot(&Env{Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
		cmd, rest, err := root.Find(c.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatal(err)
		}
		err = cmd.ValidateArgs(cmd.Flags().Args())
		if (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok %v", c.args, err, c.ok)
		}
	}
}
