package supervisor

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/launch"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/proc"
)

// rank is one started process of a distributed run.
type rank struct {
	p        launch.Process
	cmd      *exec.Cmd
	capt     *capture
	pr       *os.File
	captured chan struct{}
	done     chan struct{} // closed when the process has exited
}

// rankExit is a rank's process ending.
type rankExit struct {
	rank int
	err  error
	cmd  *exec.Cmd
}

// run starts one process per rank of this node, each with its variables and its own log
// (user_logs/std_log_process_<rank>.txt), whose lines also go to the merged log with a
// "[rank N] " prefix. The first rank to fail makes the others stop (SIGTERM, grace, SIGKILL), and
// the run's reason names it.
func (s *rankLauncher) run(w *workspace, p *pipeline) job.Result {
	ranks, err := s.start(w, p)
	if err != nil {
		s.stopAll(w, ranks)
		return job.Result{State: job.Failed, Reason: err.Error()}
	}
	s.report(job.Running, fmt.Sprintf("%d processes on this node", len(ranks)))
	exits := make(chan rankExit, len(ranks))
	for _, r := range ranks {
		go func() {
			err := r.cmd.Wait()
			close(r.done)
			exits <- rankExit{r.p.Rank, err, r.cmd}
		}()
	}
	res := s.waitAll(w, ranks, exits)
	for _, r := range ranks {
		s.drainOutput(w, r.cmd.Process.Pid, r.pr, r.captured)
		r.capt.close()
	}
	return res
}

func (s *rankLauncher) start(w *workspace, p *pipeline) ([]*rank, error) {
	var ranks []*rank
	for _, proc := range w.plan.Processes {
		capt, err := newCapture(filepath.Join(s.cfg.Dir, UserLogsDir, proc.Log), nil)
		if err != nil {
			return ranks, fmt.Errorf("open the log of rank %d: %w", proc.Rank, err)
		}
		capt.mirror, capt.prefix = p.capt, fmt.Sprintf("[rank %d] ", proc.Rank)
		capt.red = s.secrets.red.Load() // secretenv.go
		pr, pw, err := os.Pipe()
		if err != nil {
			capt.close()
			return ranks, err
		}
		cmd := w.proc(false, withEnv(w.vars, proc.Env), w.shell, "-c", w.command)
		cmd, err = s.startPiped(w, cmd, pr, pw)
		if err != nil {
			capt.close()
			return ranks, fmt.Errorf("start rank %d: %w", proc.Rank, err)
		}
		r := &rank{p: proc, cmd: cmd, capt: capt, pr: pr, captured: make(chan struct{}), done: make(chan struct{})}
		go func() { r.capt.copyFrom(r.pr); close(r.captured) }()
		ranks = append(ranks, r)
	}
	return ranks, nil
}

// waitAll waits for every rank, stopping all on the first failure, a cancel or the timeout.
func (s *rankLauncher) waitAll(w *workspace, ranks []*rank, exits <-chan rankExit) job.Result {
	var timeout <-chan time.Time
	if t := s.spec.Spec.Limits.TimeoutSeconds; t > 0 {
		timer := time.NewTimer(time.Duration(t) * time.Second)
		defer timer.Stop()
		timeout = timer.C
	}
	var first *rankExit
	stopReason := ""
	canceled := s.canceled
	for left := len(ranks); left > 0; left-- {
		select {
		case e := <-exits:
			if code := exitCode(e.cmd, e.err); code != 0 && first == nil && stopReason == "" {
				first = &e
				s.log.Info("rank failed; stopping the others", "rank", e.rank, "exit_code", code)
				go s.stopAll(w, ranks)
			}
			continue
		case <-canceled:
			stopReason = s.cancelWhy
		case <-timeout:
			stopReason = fmt.Sprintf("canceled: the job exceeded limits.timeout (%ds)", s.spec.Spec.Limits.TimeoutSeconds)
		}
		left++ // that was no exit
		go s.stopAll(w, ranks)
		canceled, timeout = nil, nil
	}
	now := time.Now().UTC()
	switch {
	case first != nil:
		code := exitCode(first.cmd, first.err)
		return job.Result{State: job.Failed, ExitCode: &code, Time: now,
			Reason: fmt.Sprintf("rank %d exited with code %d first; the other ranks were stopped", first.rank, code)}
	case stopReason != "":
		code := 143
		return job.Result{State: s.stopState(stopReason), ExitCode: &code, Reason: stopReason, Time: now}
	}
	zero := 0
	return job.Result{State: job.Completed, ExitCode: &zero, Time: now}
}

// stopAll sends SIGTERM to every rank's process group, then SIGKILL to every rank still
// running after the grace period (proc.Escalate; a rank that is gone is not signalled: its pid
// may already belong to someone else).
func (s *rankLauncher) stopAll(w *workspace, ranks []*rank) {
	grace := time.Duration(s.spec.CancelGraceSeconds) * time.Second
	if grace <= 0 {
		grace = 10 * time.Second
	}
	targets := make([]proc.Target, len(ranks))
	for i, r := range ranks {
		pgid := r.cmd.Process.Pid
		targets[i] = proc.Target{Done: r.done, Signal: func(sig syscall.Signal) { w.signal(pgid, sig) }}
	}
	proc.Escalate(context.Background(), grace, targets...)
}

// withEnv returns vars (K=V, sorted) with extra set on top.
func withEnv(vars []string, extra map[string]string) []string {
	m := map[string]string{}
	for _, kv := range vars {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				m[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	for k, v := range extra {
		m[k] = v
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+m[k])
	}
	return out
}

// plan plans this node's processes from the run's distribution and topology.
func (s *rankLauncher) plan() (launch.Plan, error) {
	sp := s.spec.Spec
	gpus := s.spec.GPUs // assigned by the server on cluster nodes
	if gpus == nil {
		gpus = runGPUs()
	}
	top := launch.Topology{Nodes: s.spec.Nodes, NodeRank: s.spec.NodeRank, MasterPort: s.spec.MasterPort, GPUs: gpus}
	if len(top.Nodes) == 0 {
		top.Nodes = []string{"127.0.0.1"}
	}
	instances := max(sp.Resources.InstanceCount, 1)
	if len(top.Nodes) == 1 && instances > 1 {
		instances = 1 // a target that runs one node (its placement is checked at submit)
	}
	plan, err := launch.Make(sp.Distribution, instances, top)
	if err != nil {
		return plan, fmt.Errorf("distribution: %w", err)
	}
	// Collective libraries pick a network interface from the host name, which may resolve to
	// loopback: point them at the interface of the address the other nodes know this node by.
	if iface := ifaceOf(top.Nodes[top.NodeRank]); iface != "" && len(top.Nodes) > 1 {
		for i := range plan.Processes {
			for _, k := range []string{"GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"} {
				if _, set := sp.EnvironmentVariables[k]; !set {
					plan.Processes[i].Env[k] = iface
				}
			}
		}
	}
	return plan, nil
}

// runGPUs are the GPUs this supervisor may give its processes: those its environment restricts it
// to (CUDA_VISIBLE_DEVICES, set per agent), else every GPU nvidia-smi lists.
func runGPUs() []string {
	if v, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES"); ok {
		var out []string
		for _, g := range strings.Split(v, ",") {
			if g = strings.TrimSpace(g); g != "" && g != "-1" {
				out = append(out, g)
			}
		}
		return out
	}
	var out []string
	for _, g := range node.DetectGPUs(context.Background()) {
		out = append(out, strconv.Itoa(g.Index))
	}
	return out
}

// ifaceOf names the local network interface holding ip ("" when none does).
func ifaceOf(ip string) string {
	if ifc, _ := interfaceWith(ip); ifc != nil {
		return ifc.Name
	}
	return ""
}

// subnetOf is the network (CIDR) of the local interface holding ip ("" when none does).
func subnetOf(ip string) string {
	if _, n := interfaceWith(ip); n != nil {
		return (&net.IPNet{IP: n.IP.Mask(n.Mask), Mask: n.Mask}).String()
	}
	return ""
}

// interfaceWith finds the local network interface holding ip and its address there (nil, nil
// when none does).
func interfaceWith(ip string) (*net.Interface, *net.IPNet) {
	want := net.ParseIP(ip)
	ifaces, err := net.Interfaces()
	if want == nil || err != nil {
		return nil, nil
	}
	for i := range ifaces {
		addrs, _ := ifaces[i].Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(want) {
				return &ifaces[i], n
			}
		}
	}
	return nil, nil
}
