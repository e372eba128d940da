package backendtest

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/job"
)

// foreignHandles are handles no backend instance of the suite handed out: garbage, and the
// shapes of every backend's handles naming nothing of the backend under test. wantBad marks
// those every backend must refuse as backend.ErrBadHandle (they are no handle at all).
var foreignHandles = []struct {
	name    string
	h       backend.Handle
	wantBad bool
}{
	{"nil", nil, true},
	{"empty", backend.Handle(""), true},
	{"null", backend.Handle("null"), true},
	{"not JSON", backend.Handle("not json"), true},
	{"an array", backend.Handle("[1]"), true},
	{"an empty object", backend.Handle("{}"), true},
	{"unknown fields", backend.Handle(`{"unknown":1}`), true},
	{"trailing data", backend.Handle(`{"pid":1} {}`), true},
	{"the fake's", HandleFor("suite-foreign"), false},
	{"local's, outside the backend", backend.Handle(`{"pid":1,"start_time":1,"dir":"/"}`), false},
	{"ssh's, unknown target", backend.Handle(`{"target":"no-such-target","proc":{"pid":1},"dir":"/tmp/runs/x","tunnel_port":"1"}`), false},
	{"slurm's, unknown target", backend.Handle(`{"target":"no-such-target","job_id":"1","dir":"/tmp/runs/x"}`), false},
	{"kubernetes's, unknown target", backend.Handle(`{"target":"no-such-target","namespace":"x","job":"hangar-x","uid":"x"}`), false},
	{"a cluster's, unknown nodes", backend.Handle(`{"run":"x","pool":"no-such-pool","nodes":["no-such-node"]}`), false},
}

// testForeignHandles: a handle the backend did not hand out is an error from Status, Cancel and
// Pending (where the backend has it): not a panic, not a success, and nothing is reaped.
func testForeignHandles(s *suite) {
	b := s.e.New()
	ctx, cancel := s.ctx()
	defer cancel()
	calls := map[string]func(backend.Handle) error{
		"Status": func(h backend.Handle) error { _, err := b.Status(ctx, h); return err },
		"Cancel": func(h backend.Handle) error { return b.Cancel(ctx, h) },
	}
	if p, ok := b.(backend.Pender); ok {
		calls["Pending"] = func(h backend.Handle) error { _, _, err := p.Pending(ctx, h); return err }
	}
	for _, fh := range foreignHandles {
		for name, call := range calls {
			err := noPanic(name, func() error { return call(fh.h) })
			switch {
			case err == nil:
				s.t.Errorf("%s(%s %q) succeeded; want an error", name, fh.name, fh.h)
			case strings.Contains(err.Error(), "panicked"):
				s.t.Errorf("%s(%s %q): %v", name, fh.name, fh.h, err)
			case fh.wantBad && !errors.Is(err, backend.ErrBadHandle):
				s.t.Errorf("%s(%s %q) = %v; want an error that is backend.ErrBadHandle", name, fh.name, fh.h, err)
			}
		}
	}
}

// testCompletes: a run that ends by itself is final from its result file (for this instance and
// a fresh one, again and again), its logs and outputs of every node reached the workspace, its
// code came with it, and a cancel after the end is nil.
func testCompletes(s *suite) {
	r := s.launch(`cat data.txt; echo "out-{{nonce}}" > outputs/result.txt; echo "done-{{nonce}}"; exit 3`)
	b := s.e.New()
	h := s.submit(b, r.Launch)
	st := s.waitFinal(b, h)
	code := 3
	want := job.Result{State: job.Failed, ExitCode: &code, Reason: "the command exited with code 3"}
	if f := st.Final; f.State != want.State || f.ExitCode == nil || *f.ExitCode != code || f.Reason != want.Reason || f.Time.IsZero() {
		s.t.Errorf("final %+v, want %s, exit code 3, %q and a time", f, want.State, want.Reason)
	}
	d := s.ws.Delivered(r.RunID)
	if d.Final == nil || d.Final.State != st.Final.State || d.Final.Reason != st.Final.Reason || !d.Final.Time.Equal(st.Final.Time) {
		s.t.Errorf("the backend's final %+v differs from the supervisor's report %+v: it is not the result file", st.Final, d.Final)
	}
	for _, other := range []backend.Backend{b, s.e.New()} {
		if again := s.status(other, h); again.Alive || !sameResult(again.Final, st.Final) {
			s.t.Errorf("status again (a fresh instance, or later): %+v, want the same final %+v", again, st.Final)
		}
	}
	s.checkDelivered(r, "code-"+r.nonce, "done-"+r.nonce)
	if out, err := s.ws.File(d.Artifacts[0].Artifacts, "outputs/result.txt"); err != nil || out != "out-"+r.nonce+"\n" {
		s.t.Errorf("outputs/result.txt in the artifacts: %q, %v", out, err)
	}
	s.cancel(b, h, "after the end")
	s.cancel(s.e.New(), h, "after the end, from a fresh instance")
	if n := s.e.Supervisors(r.RunID); n != 0 {
		s.t.Errorf("%d supervisors of the ended run still there", n)
	}
}

// checkDelivered checks that every node registered its logs and outputs and that the run's log
// lines reached the workspace, holding lines (node 0's log, else the log of another node).
func (s *suite) checkDelivered(r run, lines ...string) {
	s.t.Helper()
	d := s.waitDelivered(r.RunID, "every node's artifacts", func(d Delivered) bool { return len(d.Artifacts) >= s.e.Nodes })
	for n := range s.e.Nodes {
		a, ok := d.Artifacts[n]
		if !ok || a.Artifacts == "" {
			s.t.Errorf("node %d registered no artifacts (%+v)", n, d.Artifacts)
			continue
		}
		logName := "user_logs/std_log.txt"
		if n > 0 {
			logName = "user_logs/std_log_node_" + strconv.Itoa(n) + ".txt"
		}
		if _, err := s.ws.File(a.Artifacts, logName); err != nil {
			s.t.Errorf("node %d's artifacts lack its log: %v", n, err)
		}
	}
	var all []string
	for _, l := range d.Logs {
		all = append(all, l...)
	}
	for _, want := range lines {
		if !logHas(all, want) {
			s.t.Errorf("no log line %q reached the workspace; it has %q", want, d.Logs)
		}
	}
}

// testIdempotentReattachCancel: a second Submit (same instance, then a fresh one) returns the
// same handle and starts nothing; a fresh instance's Status re-attaches from the handle alone;
// cancels are idempotent while the run runs and nil after it ended Canceled; the canceled run
// still delivers its outputs.
func testIdempotentReattachCancel(s *suite) {
	r := s.launch(`echo "partial-{{nonce}}" > outputs/partial.txt; echo "started-{{nonce}}"; exec -a {{marker}} sleep 300`)
	b := s.e.New()
	h := s.submit(b, r.Launch)
	if again := s.submit(b, r.Launch); !sameHandle(h, again) {
		s.t.Fatalf("a second Submit returned %s, want the same handle %s", again, h)
	}
	s.waitDelivered(r.RunID, "the run to run", func(d Delivered) bool { return slices.Contains(d.States, job.Running) })
	// Running is reported as the command starts: the cancel below must come after the command
	// wrote its partial output, which every node's "started" line, printed after it, says.
	s.waitDelivered(r.RunID, "every node's started line", func(d Delivered) bool {
		n := 0
		for _, l := range d.Logs {
			if logHas(l, "started-"+r.nonce) {
				n++
			}
		}
		return n >= s.e.Nodes
	})
	fresh := s.e.New()
	if again := s.submit(fresh, r.Launch); !sameHandle(h, again) {
		s.t.Fatalf("Submit from a fresh instance returned %s, want the same handle %s", again, h)
	}
	if st := s.status(fresh, h); !st.Alive || st.Final != nil {
		s.t.Errorf("a fresh instance's status of the running run: %+v, want alive without a result", st)
	}
	if n := s.e.Supervisors(r.RunID); n != s.e.Nodes {
		s.t.Errorf("%d supervisors (or engine jobs) for the run, want %d (one per node)", n, s.e.Nodes)
	}
	s.cancel(fresh, h, "while it runs")
	s.cancel(b, h, "a second time while it runs")
	st := s.waitFinal(b, h)
	if st.Final.State != job.Canceled {
		s.t.Errorf("final %+v, want Canceled", st.Final)
	}
	if d := s.ws.Delivered(r.RunID); d.Final == nil || d.Final.State != job.Canceled || d.SpecFetches != s.e.Nodes {
		s.t.Errorf("the workspace saw final %+v after %d spec fetches; want Canceled after %d (one supervisor per node)", d.Final, d.SpecFetches, s.e.Nodes)
	}
	s.checkDelivered(r, "started-"+r.nonce)
	if out, err := s.ws.File(s.ws.Delivered(r.RunID).Artifacts[0].Artifacts, "outputs/partial.txt"); err != nil || out != "partial-"+r.nonce+"\n" {
		s.t.Errorf("outputs/partial.txt of the canceled run: %q, %v", out, err)
	}
	s.cancel(b, h, "after the end")
	s.cancel(s.e.New(), h, "after the end, from a fresh instance")
}

// testKilledSupervisor: a supervisor killed without a result is reported not alive, ending the
// run Failed with a reason; the processes its command left are ended, and the logs and outputs
// it had are still delivered (the stand-in, `hangar reap`).
func testKilledSupervisor(s *suite) {
	r := s.launch(`echo "started-{{nonce}}"; (exec -a {{marker}} sleep 300) & wait`)
	b := s.e.New()
	h := s.submit(b, r.Launch)
	s.waitDelivered(r.RunID, "the run's first log line", func(d Delivered) bool { return logHas(d.Logs["std_log.txt"], "started-"+r.nonce) })
	s.waitFor("the command's processes", func() bool { return len(s.e.Leftovers(r.marker)) > 0 }, func() string { return "none found" })
	s.e.KillSupervisor(s.t, r.RunID)
	st := s.waitFinal(s.e.New(), h)
	if st.Final.State != job.Failed || !strings.Contains(st.Final.Reason+" "+st.Reason, "supervisor") {
		s.t.Errorf("status after the supervisor was killed: %+v (final %+v); want Failed, with a reason naming the lost supervisor", st, st.Final)
	}
	var left []string
	s.waitFor("the run's leftover processes to end", func() bool { left = s.e.Leftovers(r.marker); return len(left) == 0 },
		func() string { return "still running: " + strings.Join(left, "; ") })
	s.checkDelivered(r, "started-"+r.nonce)
}
