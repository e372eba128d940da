package backendtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// Engine is one backend's real engine as a harness started it for one test of the suite.
type Engine struct {
	// Target is the compute target the suite's runs go to.
	Target compute.Target
	// New builds a backend instance, as the server does when it starts. The suite builds several:
	// an instance must find the runs another one started from their handles alone (a restarted
	// server), so instances must not share memory.
	New func() backend.Backend

	// Nodes is how many nodes run each of the suite's runs, each with its own supervisor and its
	// own part of the logs and outputs (default 1).
	Nodes int
	// Prepare, when set, completes a launch before the suite submits it (a cluster harness
	// places the run and tells the workspace its nodes' ranks with Workspace.AddRun).
	Prepare func(t *testing.T, l *backend.Launch)
	// KillSupervisor kills a run's supervisor(s) with SIGKILL, leaving the command running.
	// Default: KillLocalSupervisor.
	KillSupervisor func(t testing.TB, runID string)
	// Supervisors counts what a run started on the engine: supervisor processes, and for engines
	// with a queue the jobs submitted for it. Default: LocalSupervisors.
	Supervisors func(runID string) int
	// Leftovers lists the engine's processes whose command line holds marker. Default:
	// LocalProcesses.
	Leftovers func(marker string) []string
	// Cleanup ends whatever a run left on the engine when a test ends (it is called for every
	// run, ended or not). Default: SIGKILL to its local supervisors and marked processes.
	Cleanup func(runID, marker string)
	// Timeout bounds each wait for the engine (default 3 minutes).
	Timeout time.Duration
}

func (e *Engine) defaults() {
	e.Nodes = max(e.Nodes, 1)
	if e.KillSupervisor == nil {
		e.KillSupervisor = KillLocalSupervisor
	}
	if e.Supervisors == nil {
		e.Supervisors = func(runID string) int { return len(LocalSupervisors(runID)) }
	}
	if e.Leftovers == nil {
		e.Leftovers = LocalProcesses
	}
	if e.Cleanup == nil {
		e.Cleanup = func(runID, marker string) {
			for _, pid := range LocalSupervisors(runID) {
				killPID(pid)
			}
			killLocal(marker)
		}
	}
	if e.Timeout <= 0 {
		e.Timeout = 3 * time.Minute
	}
}

// Run runs the conformance suite against a backend: start starts (or reaches) its real engine
// for one test, with the workspace its supervisors report to. Every subtest starts its own
// engine and workspace and runs in parallel with the others.
func Run(t *testing.T, start func(t *testing.T, ws *Workspace) *Engine) {
	for _, c := range []struct {
		name string
		test func(s *suite)
	}{
		{"ForeignHandleIsAnError", testForeignHandles},
		{"FinalFromTheResultWithLogsAndOutputs", testCompletes},
		{"SubmitIdempotentReattachCancel", testIdempotentReattachCancel},
		{"KilledSupervisorIsReportedAndReaped", testKilledSupervisor},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := NewWorkspace(t)
			e := start(t, ws)
			e.defaults()
			c.test(&suite{t: t, ws: ws, e: e, runOf: map[string]string{}})
		})
	}
}

// suite is one test of the suite: its engine, its workspace.
type suite struct {
	t  *testing.T
	ws *Workspace
	e  *Engine
	// runOf is the run of each handle Submit returned.
	runOf map[string]string
}

// run is a launch of the suite with the marker its command's processes carry.
type run struct {
	backend.Launch
	marker, nonce string
}

// launch registers a run with the workspace (code: data.txt holding "code-<nonce>") and returns
// its launch; command may use {{nonce}} and {{marker}}. The run's leftovers end with the test.
func (s *suite) launch(command string) run {
	s.t.Helper()
	nonce := randHex(6)
	r := run{nonce: nonce, marker: "hangar-suite-" + nonce}
	command = strings.NewReplacer("{{nonce}}", nonce, "{{marker}}", r.marker).Replace(command)
	spec := job.Spec{Type: "command", Command: command, Compute: s.e.Target.Name,
		CodeSnapshot: s.ws.PutTree(s.t, map[string]string{"data.txt": "code-" + nonce + "\n"})}
	r.Launch = backend.Launch{RunID: "suite-" + nonce, Token: "suite-" + nonce + "." + randHex(16), Target: s.e.Target, Spec: spec}
	s.ws.AddRun(r.RunID, r.Token, spec, s.e.Nodes, nil)
	if s.e.Prepare != nil {
		s.e.Prepare(s.t, &r.Launch)
	}
	s.t.Cleanup(func() { s.e.Cleanup(r.RunID, r.marker) })
	return r
}

func (s *suite) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(s.t.Context()), s.e.Timeout)
}

// submit submits through b, failing the test on an error.
func (s *suite) submit(b backend.Backend, l backend.Launch) backend.Handle {
	s.t.Helper()
	ctx, cancel := s.ctx()
	defer cancel()
	var h backend.Handle
	err := noPanic("Submit", func() (err error) { h, err = b.Submit(ctx, l); return err })
	if err != nil {
		s.t.Fatalf("Submit %s: %v", l.RunID, err)
	}
	s.runOf[string(h)] = l.RunID
	return h
}

// status asks b, failing the test on an error.
func (s *suite) status(b backend.Backend, h backend.Handle) backend.Status {
	s.t.Helper()
	ctx, cancel := s.ctx()
	defer cancel()
	var st backend.Status
	if err := noPanic("Status", func() (err error) { st, err = b.Status(ctx, h); return err }); err != nil {
		s.t.Fatalf("Status %s: %v", h, err)
	}
	return st
}

// cancel cancels through b, failing the test on an error: a cancel is idempotent and nil after
// the end. As the controller does, the workspace records the cancel first (its heartbeat
// replies then ask the supervisors to stop), then the backend is asked.
func (s *suite) cancel(b backend.Backend, h backend.Handle, when string) {
	s.t.Helper()
	s.ws.RequestCancel(s.runOf[string(h)])
	ctx, cancel := s.ctx()
	defer cancel()
	if err := noPanic("Cancel", func() error { return b.Cancel(ctx, h) }); err != nil {
		s.t.Fatalf("Cancel %s: %v, want nil", when, err)
	}
}

// waitFinal polls Status until the run is no longer alive and has a result.
func (s *suite) waitFinal(b backend.Backend, h backend.Handle) backend.Status {
	s.t.Helper()
	var st backend.Status
	s.waitFor("the run's end (Status not alive, with a result)", func() bool {
		st = s.status(b, h)
		return !st.Alive && st.Final != nil
	}, func() string { return fmt.Sprintf("last status %+v", st) })
	return st
}

// waitDelivered waits until what the workspace received of the run satisfies cond.
func (s *suite) waitDelivered(runID, what string, cond func(Delivered) bool) Delivered {
	s.t.Helper()
	var d Delivered
	s.waitFor(what, func() bool { d = s.ws.Delivered(runID); return cond(d) },
		func() string { return fmt.Sprintf("the workspace has %s", d) })
	return d
}

// waitFor polls cond until it holds or the engine's timeout passes.
func (s *suite) waitFor(what string, cond func() bool, last func() string) {
	s.t.Helper()
	deadline := time.Now().Add(s.e.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %s waiting for %s; %s", s.e.Timeout, what, last())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// String shows what a run delivered, for failure messages.
func (d Delivered) String() string {
	return fmt.Sprintf("states %v, final %+v, %d spec fetches, logs %q, artifacts %+v", d.States, d.Final, d.SpecFetches, d.Logs, d.Artifacts)
}

// noPanic runs a contract call, turning a panic into an error.
func noPanic(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s panicked: %v", what, p)
		}
	}()
	return f()
}

// sameHandle reports whether two handles are the same JSON value.
func sameHandle(a, b backend.Handle) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}

// sameResult compares two results of one run.
func sameResult(a, b *job.Result) bool {
	return a != nil && b != nil && a.State == b.State && a.Reason == b.Reason && a.Time.Equal(b.Time) &&
		(a.ExitCode == nil) == (b.ExitCode == nil) && (a.ExitCode == nil || *a.ExitCode == *b.ExitCode)
}

func logHas(lines []string, want string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, want) })
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
