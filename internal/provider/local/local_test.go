package local

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/proc"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// fakeAgent is an "agent" that records its arguments and join token, then waits for SIGTERM.
const fakeAgent = `#!/bin/sh
echo 'level=INFO msg="agent ready"'
echo "$@" > args
echo "$HANGAR_JOIN_TOKEN" > token
trap 'echo term > terminated; exit 0' TERM
while :; do sleep 0.05; done
`

func newProvider(t *testing.T, gpus ...int) *Provider {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "hangar")
	if err := os.WriteFile(exe, []byte(fakeAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &Provider{Exe: exe, Root: t.TempDir(), GPUs: gpus, AgentArgs: []string{"--heartbeat", "1s"},
		StopGrace: time.Second, Log: slog.New(slog.DiscardHandler)}
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(p.Root, "*", RecordFile))
		for _, f := range files {
			if rec, err := readRecord(filepath.Dir(f)); err == nil && rec.Alive() {
				_ = proc.Stop(context.Background(), rec.Proc, time.Second) // t.Context() is already canceled in cleanups
			}
		}
	})
	return p
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	testwait.For(t, path, func() bool { b, _ = os.ReadFile(path); return len(b) > 0 })
	return strings.TrimSpace(string(b))
}

func gpuSize(n int) sizes.Size {
	return sizes.Size{Name: "local-gpu", Cores: 2, MemoryBytes: 4 * resources.Gi, GPUs: n}
}

func TestCreateStartsAnAgentWithItsSlice(t *testing.T) {
	p := newProvider(t, 0, 1, 2)
	req := provider.CreateRequest{Pool: "gpu", NodeID: "gpu-a", JoinURL: "http://127.0.0.1:9", JoinToken: "hj1.secret", Size: gpuSize(2)}
	id, err := p.Create(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if id != filepath.Join(p.Root, "gpu-a") {
		t.Errorf("provider id %q", id)
	}
	args := waitFile(t, filepath.Join(id, "args"))
	want := "agent --server http://127.0.0.1:9 --work-dir " + id + " --node-id gpu-a --cores 2 --memory 4294967296 --gpus 0,1 --kill-runs-on-exit --exit-grace 1s --heartbeat 1s"
	if args != want {
		t.Errorf("agent args\n got %s\nwant %s", args, want)
	}
	if tok := waitFile(t, filepath.Join(id, "token")); tok != "hj1.secret" {
		t.Errorf("join token in the environment = %q", tok)
	}
	// The next node gets the GPU left; one more finds none.
	id2, err := p.Create(t.Context(), provider.CreateRequest{Pool: "gpu", NodeID: "gpu-b", Size: gpuSize(1)})
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := readRecord(id2); !cmp.Equal(rec.GPUs, []int{2}) {
		t.Errorf("second node GPUs %v", rec.GPUs)
	}
	if _, err := p.Create(t.Context(), provider.CreateRequest{NodeID: "gpu-c", Size: gpuSize(1)}); err == nil ||
		!strings.Contains(err.Error(), "0 of this machine's 3 are free") {
		t.Errorf("third Create = %v", err)
	}
	// Deleting a node frees its GPUs.
	if err := p.Delete(t.Context(), provider.DeleteRequest{NodeID: "gpu-a", ProviderID: id}); err != nil {
		t.Fatal(err)
	}
	if got := waitFile(t, filepath.Join(id, "terminated")); got != "term" {
		t.Errorf("agent saw %q", got)
	}
	if _, err := p.Create(t.Context(), provider.CreateRequest{NodeID: "gpu-c", Size: gpuSize(2)}); err != nil {
		t.Errorf("Create after a delete = %v", err)
	}
}

func TestDeleteIsIdempotentAndKills(t *testing.T) {
	p := newProvider(t)
	p.StopGrace = 100 * time.Millisecond
	// An agent that ignores SIGTERM is killed after the grace period.
	if err := os.WriteFile(p.Exe, []byte("#!/bin/sh\ntrap '' TERM\necho 'agent ready'\necho up > up\nwhile :; do sleep 0.05; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := p.Create(t.Context(), provider.CreateRequest{NodeID: "n1", Size: sizes.Size{Cores: 1, MemoryBytes: resources.Gi}})
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(id, "up"))
	rec, err := readRecord(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(t.Context(), provider.DeleteRequest{NodeID: "n1", ProviderID: id}); err != nil {
		t.Fatal(err)
	}
	if rec.Alive() {
		t.Errorf("agent %d alive after Delete", rec.PID)
	}
	for _, missing := range []string{id, filepath.Join(p.Root, "never-created")} {
		if err := p.Delete(t.Context(), provider.DeleteRequest{NodeID: "n1", ProviderID: missing}); err != nil {
			t.Errorf("Delete of a gone node = %v", err)
		}
	}
}

// An agent that exits at start fails the Create with what it wrote; one that has not joined
// within StartWait is left to the node's join timeout.
func TestCreateWaitsForTheAgentToStart(t *testing.T) {
	p := newProvider(t)
	size := sizes.Size{Cores: 1, MemoryBytes: resources.Gi}
	write := func(script string) {
		t.Helper()
		if err := os.WriteFile(p.Exe, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("#!/bin/sh\necho 'Error: --gpus: no GPU 7 on this machine' >&2\nexit 2\n")
	_, err := p.Create(t.Context(), provider.CreateRequest{NodeID: "bad", Size: size})
	if want := "create node bad: the agent exited at start (exit status 2): Error: --gpus: no GPU 7 on this machine"; err == nil || err.Error() != want {
		t.Errorf("Create of a failing agent = %v\nwant %s", err, want)
	}
	write("#!/bin/sh\nexit 1\n")
	if _, err := p.Create(t.Context(), provider.CreateRequest{NodeID: "mute", Size: size}); err == nil ||
		!strings.HasSuffix(err.Error(), "the agent exited at start (exit status 1): it wrote nothing") {
		t.Errorf("Create of a mute failing agent = %v", err)
	}
	// Restarted on the same node: only this start's lines count.
	write("#!/bin/sh\necho 'level=WARN msg=\"cannot reach the server to join; retrying\"'\nwhile :; do sleep 0.05; done\n")
	p.StartWait = 300 * time.Millisecond
	id, err := p.Create(t.Context(), provider.CreateRequest{NodeID: "bad", Size: size})
	if err != nil {
		t.Fatalf("Create of an agent still joining = %v", err)
	}
	got := p.Explain(t.Context(), provider.DeleteRequest{NodeID: "bad", ProviderID: id})
	if !strings.Contains(got, ") is running; agent.log: ") || !strings.HasSuffix(got, `level=WARN msg="cannot reach the server to join; retrying"`) {
		t.Errorf("Explain of a running agent = %q", got)
	}
	if err := p.Delete(t.Context(), provider.DeleteRequest{NodeID: "bad", ProviderID: id}); err != nil {
		t.Fatal(err)
	}
}

func TestExplain(t *testing.T) {
	p := newProvider(t)
	if got := p.Explain(t.Context(), provider.DeleteRequest{NodeID: "x", ProviderID: filepath.Join(p.Root, "x")}); got != "" {
		t.Errorf("Explain of an unknown node = %q", got)
	}
	if err := os.WriteFile(p.Exe, []byte("#!/bin/sh\necho 'agent ready'\necho 'join: 410 node gone'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := p.Create(t.Context(), provider.CreateRequest{NodeID: "n1", Size: sizes.Size{Cores: 1, MemoryBytes: resources.Gi}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := readRecord(id)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the agent to exit", func() bool { return !rec.Alive() })
	want := fmt.Sprintf("the agent (pid %d) has exited; agent.log: agent ready | join: 410 node gone", rec.PID)
	if got := p.Explain(t.Context(), provider.DeleteRequest{NodeID: "n1", ProviderID: id}); got != want {
		t.Errorf("Explain = %q\nwant %q", got, want)
	}
}
