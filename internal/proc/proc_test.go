package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/testwait"
)

func TestIs(t *testing.T) {
	running := node.ProcStat{PID: 10, State: 'S', StartTime: 500}
	tests := []struct {
		name string
		p    Proc
		st   node.ProcStat
		want bool
	}{
		{"same process", Proc{PID: 10, StartTime: 500}, running, true},
		{"start time unknown", Proc{PID: 10}, running, true},
		{"pid reused", Proc{PID: 10, StartTime: 499}, running, false},
		{"zombie", Proc{PID: 10, StartTime: 500}, node.ProcStat{PID: 10, State: 'Z', StartTime: 500}, false},
		{"dead", Proc{PID: 10, StartTime: 500}, node.ProcStat{PID: 10, State: 'X', StartTime: 500}, false},
		{"another pid's stat", Proc{PID: 11}, running, false},
		{"no pid", Proc{}, node.ProcStat{}, false},
	}
	for _, tt := range tests {
		if got := tt.p.Is(tt.st); got != tt.want {
			t.Errorf("%s: %+v.Is(%+v) = %v, want %v", tt.name, tt.p, tt.st, got, tt.want)
		}
	}
}

// recorder is a Target that records its signals and ends on the signals it is told to obey.
type recorder struct {
	mu   sync.Mutex
	got  []syscall.Signal
	obey map[syscall.Signal]bool
	done chan struct{}
	once sync.Once
}

func newRecorder(obey ...syscall.Signal) *recorder {
	r := &recorder{obey: map[syscall.Signal]bool{}, done: make(chan struct{})}
	for _, s := range obey {
		r.obey[s] = true
	}
	return r
}

func (r *recorder) target() Target {
	return Target{Done: r.done, Signal: func(sig syscall.Signal) {
		r.mu.Lock()
		r.got = append(r.got, sig)
		r.mu.Unlock()
		if r.obey[sig] {
			r.once.Do(func() { close(r.done) })
		}
	}}
}

func (r *recorder) signals() []syscall.Signal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// Every target that ignores SIGTERM gets SIGKILL when the grace period is over: not only the
// first (the supervisor's old rank loop waited on one deadline that fires once, so a second rank
// ignoring SIGTERM was never killed).
func TestEscalateKillsEveryStubbornTarget(t *testing.T) {
	obeys, stubborn1, stubborn2 := newRecorder(syscall.SIGTERM), newRecorder(syscall.SIGKILL), newRecorder(syscall.SIGKILL)
	ended := newRecorder()
	close(ended.done)
	Escalate(t.Context(), 10*time.Millisecond, obeys.target(), stubborn1.target(), ended.target(), stubborn2.target())
	term, kill := []syscall.Signal{syscall.SIGTERM}, []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
	for name, c := range map[string]struct {
		r    *recorder
		want []syscall.Signal
	}{"obeys": {obeys, term}, "stubborn 1": {stubborn1, kill}, "stubborn 2": {stubborn2, kill}, "already ended": {ended, nil}} {
		if got := c.r.signals(); !slices.Equal(got, c.want) {
			t.Errorf("%s: signals %v, want %v", name, got, c.want)
		}
	}
}

// A target that ends within the grace period is not killed, and Escalate does not wait out the
// grace period for it.
func TestEscalateReturnsWhenAllEnded(t *testing.T) {
	a, b := newRecorder(syscall.SIGTERM), newRecorder(syscall.SIGTERM)
	Escalate(t.Context(), time.Hour, a.target(), b.target())
	for _, r := range []*recorder{a, b} {
		if got := r.signals(); !slices.Equal(got, []syscall.Signal{syscall.SIGTERM}) {
			t.Errorf("signals %v, want SIGTERM only", got)
		}
	}
}

// A detached process is named by pid and start time, outlives nothing it should not, and Stop
// ends one that ignores SIGTERM with SIGKILL once the grace period is over.
func TestStartDetachedAndStop(t *testing.T) {
	dir := t.TempDir()
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command("bash", "-c", `trap 'echo got-term' TERM; echo ready; while :; do sleep 0.05; done`)
	cmd.Stdout, cmd.Stderr = log, log
	p, exited, err := StartDetached(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-p.PID, syscall.SIGKILL) })
	if p.PID <= 0 || p.StartTime == 0 || !p.Alive() {
		t.Fatalf("started %+v, alive %v", p, p.Alive())
	}
	if sid, _ := syscall.Getpgid(p.PID); sid != p.PID {
		t.Errorf("process group %d, want its own (%d)", sid, p.PID)
	}
	if (Proc{PID: p.PID, StartTime: p.StartTime + 1}).Alive() {
		t.Error("a Proc with another start time is alive: a reused pid would be mistaken for it")
	}
	testwait.For(t, "the process to log ready", func() bool { b, _ := os.ReadFile(log.Name()); return strings.Contains(string(b), "ready") })
	// The grace period must outlast bash's wait for its foreground sleep, after which it runs
	// the trap: 50ms was shorter than that on a loaded CI machine, and the trap never ran.
	if err := Stop(t.Context(), p, time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Alive() {
		t.Error("alive after Stop")
	}
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("exit %v, want killed by SIGKILL", err)
		}
	case <-t.Context().Done():
		t.Fatal("no exit")
	}
	if b, _ := os.ReadFile(log.Name()); !strings.Contains(string(b), "got-term") {
		t.Errorf("the process did not get SIGTERM first; log: %q", b)
	}
	if err := p.Signal(syscall.SIGTERM); err == nil {
		t.Error("Signal to an ended process succeeded")
	}
}
