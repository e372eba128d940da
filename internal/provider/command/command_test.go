package command

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/testwait"
)

var req = provider.CreateRequest{Pool: "gpu", NodeID: "gpu-1a2b", JoinURL: "http://10.0.0.1:8700", JoinToken: "hj1.x.y",
	WorkDir: "/var/lib/hangar", Size: sizes.Size{Name: "Standard_NC6s_v3", Cores: 6, MemoryBytes: 112 * resources.Gi, GPUs: 1}}

func newProvider(t *testing.T, spec compute.Provider) *Provider {
	t.Helper()
	return &Provider{Spec: spec, Dir: t.TempDir(), Log: slog.New(slog.DiscardHandler)}
}

func TestCreate(t *testing.T) {
	tests := []struct {
		name   string
		create string
		env    map[string]string
		want   string // provider id, or a substring of the error
		err    bool
	}{
		{"last stdout line", "echo creating; echo vm-42", nil, "vm-42", false},
		{"trailing blank lines", "printf 'vm-7\\n\\n\\n'", nil, "vm-7", false},
		{"stderr is not the id", "echo vm-1; echo noise >&2", nil, "vm-1", false},
		{"variables", `echo "$HANGAR_JOIN_URL|$HANGAR_JOIN_TOKEN|$HANGAR_NODE_ID|$HANGAR_POOL|$HANGAR_SIZE|$HANGAR_CORES|$HANGAR_MEMORY_BYTES|$HANGAR_GPUS|$HANGAR_WORK_DIR|$REGION"`,
			map[string]string{"REGION": "westeurope", "HANGAR_NODE_ID": "spoofed"},
			"http://10.0.0.1:8700|hj1.x.y|gpu-1a2b|gpu|Standard_NC6s_v3|6|120259084288|1|/var/lib/hangar|westeurope", false},
		{"no id", "echo >&2 only stderr", nil, "printed no provider id (its last line on stdout): only stderr", true},
		{"failure carries stderr", "echo 'quota exceeded for NCSv3' >&2; exit 3", nil, "exit status 3: quota exceeded for NCSv3", true},
		{"failure carries stdout's tail in one line", "echo 'creating VM'; echo 'no capacity'; exit 4", nil,
			"exit status 4: creating VM | no capacity", true},
		{"a missing command says so", "nohup no-such-hangar agent", nil, "exit status 127: nohup: failed to run command 'no-such-hangar': No such file or directory", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, compute.Provider{Type: "command", Create: tt.create, Env: tt.env})
			id, err := p.Create(t.Context(), req)
			switch {
			case tt.err && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Create = %q, %v; want an error with %q", id, err, tt.want)
			case !tt.err && (err != nil || id != tt.want):
				t.Fatalf("Create = %q, %v; want %q", id, err, tt.want)
			}
		})
	}
}

func TestCreateTimeoutKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	p := newProvider(t, compute.Provider{Type: "command", Timeout: 1,
		Create: "sleep 300 & echo $! > " + pidFile + "; echo 'waiting for the VM' >&2; wait"})
	start := time.Now()
	_, err := p.Create(t.Context(), req)
	if err == nil || !strings.Contains(err.Error(), "killed after its timeout of 1s: waiting for the VM") {
		t.Fatalf("Create = %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a 1s timeout took %s", took)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	testwait.Within(t, 5*time.Second, "the hook's child "+strconv.Itoa(pid)+" to end with the timeout", func() bool {
		return syscall.Kill(pid, 0) != nil || zombie(pid)
	})
}

// A hook that leaves a process behind holding its stdout returns once the hook itself exits.
func TestCreateWithBackgroundChild(t *testing.T) {
	p := newProvider(t, compute.Provider{Type: "command", Create: "sleep 30 & echo $!"})
	start := time.Now()
	id, err := p.Create(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("Create waited %s for the background child", took)
	}
	pid, err := strconv.Atoi(id)
	if err != nil {
		t.Fatalf("id %q: %v", id, err)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func TestDelete(t *testing.T) {
	out := filepath.Join(t.TempDir(), "deleted")
	p := newProvider(t, compute.Provider{Type: "command", Create: "true",
		Delete: `echo "$HANGAR_PROVIDER_ID $HANGAR_NODE_ID $HANGAR_POOL $HANGAR_JOIN_TOKEN" > ` + out})
	if err := p.Delete(t.Context(), provider.DeleteRequest{Pool: "gpu", NodeID: "gpu-1", ProviderID: "vm-9"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "vm-9 gpu-1 gpu \n" {
		t.Errorf("delete hook saw %q", b)
	}
	failing := newProvider(t, compute.Provider{Type: "command", Delete: "echo 'no such VM' >&2; exit 1"})
	if err := failing.Delete(t.Context(), provider.DeleteRequest{NodeID: "n", ProviderID: "vm"}); err == nil || !strings.Contains(err.Error(), "no such VM") {
		t.Errorf("failing Delete = %v", err)
	}
	none := newProvider(t, compute.Provider{Type: "command"})
	if err := none.Delete(t.Context(), provider.DeleteRequest{ProviderID: "vm"}); err != nil {
		t.Errorf("Delete without a hook = %v", err)
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 5}
	for _, s := range []string{"abc", "defg", "h"} {
		tl.Write([]byte(s))
	}
	if got := tl.String(); got != "defgh" {
		t.Errorf("tail = %q", got)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// What a create hook printed is kept per node for Explain, until the node is deleted.
func TestExplainKeepsCreateOutput(t *testing.T) {
	p := newProvider(t, compute.Provider{Type: "command", Delete: "true",
		Create: `echo "booting VM for $HANGAR_NODE_ID"; echo 'cloud-init pending' >&2; echo vm-7`})
	if got := p.Explain(t.Context(), provider.DeleteRequest{NodeID: req.NodeID}); got != "" {
		t.Errorf("Explain before Create = %q", got)
	}
	id, err := p.Create(t.Context(), req)
	if err != nil || id != "vm-7" {
		t.Fatalf("Create = %q, %v", id, err)
	}
	got := p.Explain(t.Context(), provider.DeleteRequest{NodeID: req.NodeID, ProviderID: id})
	for _, want := range []string{"create hook output: ", "booting VM for gpu-1a2b", "cloud-init pending", "vm-7"} {
		if !strings.Contains(got, want) || strings.Contains(got, "\n") {
			t.Errorf("Explain = %q, want one line with %q", got, want)
		}
	}
	if err := p.Delete(t.Context(), provider.DeleteRequest{NodeID: req.NodeID, ProviderID: id}); err != nil {
		t.Fatal(err)
	}
	if got := p.Explain(t.Context(), provider.DeleteRequest{NodeID: req.NodeID}); got != "" {
		t.Errorf("Explain after Delete = %q", got)
	}
	quiet := newProvider(t, compute.Provider{Type: "command", Create: "echo vm-8 > /dev/null; echo vm-8"})
	if _, err := quiet.Create(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if got := quiet.Explain(t.Context(), provider.DeleteRequest{NodeID: req.NodeID}); got != "create hook output: vm-8" {
		t.Errorf("Explain = %q", got)
	}
}

// A hook runs without the workspace: its home (Hide) is empty where the hook runs, and none of
// the server's own HANGAR_ variables reach it (issue 27: a hook that read the workspace token).
func TestHookDoesNotSeeTheWorkspace(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "token"), []byte("WORKSPACE-TOKEN"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HANGAR_HOME", home)
	t.Setenv("HANGAR_DATABASE_URL", "postgres://u:pw@db/x")
	p := newProvider(t, compute.Provider{Type: "command",
		Create: `cat "` + home + `/token" 2>&1; echo "home=[$HANGAR_HOME] db=[$HANGAR_DATABASE_URL]"; echo vm-1`})
	p.Hide = []string{home}
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skip("needs bubblewrap (scripts/setup/sandbox.sh installs it)")
	}
	id, err := p.Create(t.Context(), req)
	if err != nil || id != "vm-1" {
		t.Fatalf("Create = %q, %v", id, err)
	}
	out := p.Explain(t.Context(), provider.DeleteRequest{NodeID: req.NodeID})
	if strings.Contains(out, "WORKSPACE-TOKEN") || strings.Contains(out, "pw@") || !strings.Contains(out, "home=[] db=[]") {
		t.Fatalf("the hook saw the workspace: %s", out)
	}
}
