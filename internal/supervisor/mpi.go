package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// runMPI runs the command once under mpirun (Open MPI) with one slot per process of the plan; the
// launcher starts the ranks. Its output, tagged with each line's rank, is the run's log; each
// rank's own output is collected afterwards into std_log_process_<rank>.txt.
func (s *rankLauncher) runMPI(w *workspace, p *pipeline) job.Result {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		return job.Result{State: job.Failed, Reason: "distribution mpi: mpirun (Open MPI) is not on this node's PATH"}
	}
	hostfile := filepath.Join(s.cfg.Dir, "hangar", "hostfile")
	if err := os.WriteFile(hostfile, []byte(w.plan.Hostfile), 0o644); err != nil {
		return job.Result{State: job.Failed, Reason: err.Error()}
	}
	args := []string{"--allow-run-as-root", "--oversubscribe", "--tag-output",
		"-np", strconv.Itoa(w.plan.WorldSize), "--hostfile", hostfile}
	extra := map[string]string{"OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
	if nodes := s.spec.Nodes; len(nodes) > 1 {
		// The other nodes' daemons are started through Hangar (hangar mpi-rsh → the server → their
		// supervisors), not ssh; MPI traffic uses the interface of the nodes' known addresses.
		exe, err := os.Executable()
		if err != nil {
			return job.Result{State: job.Failed, Reason: err.Error()}
		}
		args = append(args, "--mca", "plm_rsh_agent", exe+" mpi-rsh", "--mca", "plm_rsh_no_tree_spawn", "1")
		// As a network (CIDR), not an interface name: the name differs from node to node.
		if subnet := subnetOf(nodes[0]); subnet != "" {
			args = append(args, "--mca", "oob_tcp_if_include", subnet, "--mca", "btl_tcp_if_include", subnet)
		}
		extra["HANGAR_NODE_ADDRS"] = strings.Join(nodes, ",")
		extra["HANGAR_RUN_ATTEMPT"] = strconv.Itoa(s.spec.Attempt)
	}
	args = append(args, w.shell, "-c", w.command)
	pr, pw, err := os.Pipe()
	if err != nil {
		return job.Result{State: job.Failed, Reason: err.Error()}
	}
	cmd := w.proc(false, withEnv(w.vars, extra), mpirun, args...)
	if cmd, err = s.startPiped(w, cmd, pr, pw); err != nil {
		return job.Result{State: job.Failed, Reason: fmt.Sprintf("start mpirun: %v", err)}
	}
	s.report(job.Running, fmt.Sprintf("mpirun with %d processes", w.plan.WorldSize))
	captured := make(chan struct{})
	go func() { p.capt.copyFrom(retag(pr)); close(captured) }()
	res := s.wait(w, cmd, nil)
	s.drainOutput(w, cmd.Process.Pid, pr, captured)
	s.split(w.plan.WorldSize)
	return res
}

// split writes each rank's lines of the run's log into user_logs/std_log_process_<n>.txt.
func (s *rankLauncher) split(world int) {
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, UserLogsDir, StdLogFile))
	if err != nil {
		return
	}
	per := make([][]byte, world)
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		var n int
		if _, err := fmt.Sscanf(string(line), "[rank %d] ", &n); err == nil && n >= 0 && n < world {
			per[n] = append(per[n], line[bytes.IndexByte(line, ']')+2:]...)
		}
	}
	for n, out := range per {
		_ = os.WriteFile(filepath.Join(s.cfg.Dir, UserLogsDir, fmt.Sprintf("std_log_process_%d.txt", n)), out, 0o644)
	}
}

// runMPIWorker serves a node other than the first of a multi-node MPI run: mpirun on node 0 asks,
// through the server, for its daemons to be started here; this runs each request (they daemonize
// and start this node's ranks, whose output goes back to mpirun) until the run ends.
func (s *rankLauncher) runMPIWorker(ctx context.Context, w *workspace, p *pipeline) job.Result {
	fmt.Fprintf(p.capt, "hangar: node %d waits for the MPI launcher on node 0\n", s.spec.NodeRank)
	for !s.isCanceled() {
		reqs, err := s.conn.c.Runs.PendingExecs(ctx, s.cfg.RunID, s.spec.NodeRank, 5*time.Second)
		if err != nil {
			s.conn.reresolve()
			select {
			case <-s.canceled:
			case <-time.After(time.Second):
			}
			continue
		}
		for _, r := range reqs {
			st := s.execRelayed(w, r.Command)
			fmt.Fprintf(p.capt, "hangar: started the MPI daemon for node %d (exit %d)\n", s.spec.NodeRank, st.ExitCode)
			_ = s.conn.retry(ctx, "exec done", func(ctx context.Context) error {
				return s.conn.c.Runs.ExecDone(ctx, s.cfg.RunID, r.ID, st)
			})
		}
	}
	zero := 0
	return job.Result{State: job.Completed, ExitCode: &zero, Reason: "the run ended"}
}

// execRelayed runs a relayed command with the run's variables and returns how it ended.
func (s *rankLauncher) execRelayed(w *workspace, command string) api.ExecStatus {
	cmd := w.proc(false, w.vars, "/bin/sh", "-c", command)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 2 * time.Second // the daemon it starts may keep the output open
	cmd, err := w.box.Start(cmd)
	if err == nil {
		if berr := w.box.Started(cmd); berr != nil {
			s.warn(berr.Error())
		}
		err = cmd.Wait()
	}
	return api.ExecStatus{ExitCode: exitCode(cmd, err), Output: out.String()}
}
