package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// callers keeps n goroutines scoring an endpoint back to back until stopped, counting the answers.
type callers struct {
	s        *scorer
	stop     atomic.Bool
	wg       sync.WaitGroup
	total    atomic.Int64
	mu       sync.Mutex
	failures []string
}

func (s *scorer) loop(n int) *callers {
	c := &callers{s: s}
	for range n {
		c.wg.Go(func() {
			for !c.stop.Load() {
				code, a, body := s.score(2, "")
				c.total.Add(1)
				if code != 200 || a.Y != 6 {
					c.mu.Lock()
					c.failures = append(c.failures, fmt.Sprintf("%d %s", code, strings.TrimSpace(body)))
					c.mu.Unlock()
				}
			}
		})
	}
	return c
}

// waitAnswers waits until the callers have had n more answers.
func (c *callers) waitAnswers(t *testing.T, n int64) {
	t.Helper()
	want := c.total.Load() + n
	testwait.Within(t, time.Minute, fmt.Sprintf("%d more answers", n), func() bool { return c.total.Load() >= want })
}

// end stops the callers and returns how many requests they sent and what failed.
func (c *callers) end() (int64, []string) {
	c.stop.Store(true)
	c.wg.Wait()
	return c.total.Load(), c.failures
}

// processesOf counts the live processes whose command line names something under dir.
func processesOf(dir string) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(dir+"/")) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil && processAlive(pid) {
			n++
		}
	}
	return n
}

// kill -9 of one replica's supervisor while two callers keep scoring an endpoint whose
// deployment has two replicas. The killed replica leaves the router's rotation at once: a
// connection it refuses sends the request to the other replica, and its scoring server, which
// outlives its supervisor (in the sandbox too: the run's PID namespace lasts until the run's
// processes are reaped), drains, saying so in its answers, and exits; the deployment replaces
// it. No request fails.
func TestFaultReplicaSupervisorKill(t *testing.T) {
	for _, tc := range []struct {
		name, injected string
		env            []string
	}{
		{"sandboxed", "kill -9 of a replica's supervisor, 2 callers scoring 2 replicas (sandboxed)", nil},
		{"no sandbox", "kill -9 of a replica's supervisor, 2 callers scoring 2 replicas (HANGAR_SANDBOX=off)",
			[]string{"HANGAR_SANDBOX=off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			total, failed, d, leftover := killReplicaSupervisor(t, tc.env)
			row := faultRow{Target: "local", Injected: tc.injected, Runs: 1, Leftover: leftover,
				Final:  fmt.Sprintf("%d of %d requests failed; the replica's run %s, replaced", len(failed), total, d.Status),
				Reason: d.StatusReason}
			reportFault(t, row)
			if len(failed) > 0 {
				t.Errorf("%d of %d requests failed, want none; the first: %s", len(failed), total, failed[0])
			}
			if d.Status != job.Failed {
				t.Errorf("the killed replica's run ended %s (%s), want Failed", d.Status, d.StatusReason)
			}
		})
	}
}

// killReplicaSupervisor deploys two replicas, kills one's supervisor while two callers score,
// and returns what the callers saw until a replacement served, the killed run, and how many of
// its processes were left.
func killReplicaSupervisor(t *testing.T, env []string) (int64, []string, api.RunDetail, int) {
	t.Helper()
	w, dir := endpointWSEnv(t, env)
	writeFiles(t, dir, map[string]string{"two.yml": strings.Replace(deploymentYAML("blue"), "instance_count: 1\n", "instance_count: 2\n", 1)})
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "two.yml"), "--all-traffic")
	var dv api.DeploymentView
	serving := func(skip string) bool {
		w.jsonOut(&dv, "online-deployment", "show", "-n", "blue", "-e", "my-endpoint")
		n := 0
		for _, r := range dv.Replicas {
			if r.Run != skip && r.Status == "Running" && r.Address != "" {
				n++
			}
		}
		return n == 2
	}
	testwait.Within(t, 2*time.Minute, "two replicas serving", func() bool { return serving("") })
	victim := dv.Replicas[0].Run
	sup, runDir := supervisorOf(t, victim)

	c := w.scorer("my-endpoint").loop(2)
	c.waitAnswers(t, 200)
	kill9(t, sup)
	d := w.waitStatus(victim, 3*time.Minute, job.Failed, job.Completed, job.Canceled)
	testwait.Within(t, 2*time.Minute, "a replica to replace "+victim, func() bool { return serving(victim) })
	c.waitAnswers(t, 200) // through the replacement too
	total, failed := c.end()
	leftover := 0
	testwait.Within(t, 30*time.Second, "the killed replica's processes to end", func() bool {
		leftover = processesOf(runDir)
		return leftover == 0
	})
	return total, failed, d, leftover
}
