package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
)

// ReplicaOptions size the replicas group.
type ReplicaOptions struct {
	// Database is the URL of a new, empty PostgreSQL database for the measured workspace.
	Database string
	Requests int // sequential requests per latency case
	Kills    int // kill -9 rounds, of the lone server and of the leader each
}

// Replicas measures what a second server costs and buys (design 0020), on one workspace on
// PostgreSQL: `job list` and `job show` latencies through a follower against the same calls to
// the leader (the baseline); and the time from a `kill -9` until a `job create` succeeds again,
// through the follower taking the lead against a lone server restarted at once (the baseline: a
// process supervisor restarting it).
func Replicas(ctx context.Context, bin, dir string, o ReplicaOptions) ([]Figure, error) {
	r := &replicaBench{bin: bin, home: filepath.Join(dir, "home"), dir: dir, env: []string{"HANGAR_DATABASE_URL=" + o.Database}}
	defer r.stopAll()
	a, err := r.start(ctx)
	if err != nil {
		return nil, err
	}
	if err := waitRole(ctx, a.url, "leader"); err != nil { // it made the token
		return nil, err
	}
	tok, err := home.Home{Dir: r.home}.ReadToken()
	if err != nil {
		return nil, err
	}
	// The baseline's takeover: the lone server killed and started again on its address.
	var restart []float64
	for i := 0; i < o.Kills; i++ {
		d, err := r.takeover(ctx, a, tok, func() (*server, error) { return r.startOn(ctx, a.addr) })
		if err != nil {
			return nil, fmt.Errorf("restart round %d: %w", i, err)
		}
		restart = append(restart, d)
		a = r.servers[len(r.servers)-1]
	}
	b, err := r.start(ctx)
	if err != nil {
		return nil, err
	}
	if err := waitRole(ctx, b.url, "follower"); err != nil {
		return nil, err
	}
	direct, via := api.NewClient(a.url, tok), api.NewClient(b.url, tok)
	if _, err := runJobs(ctx, direct, "bench-replicas", 50, 4); err != nil {
		return nil, err
	}
	if err := waitCompleted(ctx, direct, "bench-replicas", 50, 2*time.Minute); err != nil {
		return nil, err
	}
	dl, ds, err := apiLatency(ctx, direct, "bench-replicas-0", o.Requests)
	if err != nil {
		return nil, err
	}
	fl, fs, err := apiLatency(ctx, via, "bench-replicas-0", o.Requests)
	if err != nil {
		return nil, err
	}
	// Failover rounds: kill the leader; the other server takes over; the killed one comes back
	// as a follower for the next round.
	var failover []float64
	leader, follower := a, b
	for i := 0; i < o.Kills; i++ {
		d, err := r.takeover(ctx, leader, tok, func() (*server, error) { return follower, nil })
		if err != nil {
			return nil, fmt.Errorf("failover round %d: %w", i, err)
		}
		failover = append(failover, d)
		back, err := r.startOn(ctx, leader.addr)
		if err != nil {
			return nil, err
		}
		if err := waitRole(ctx, back.url, "follower"); err != nil {
			return nil, err
		}
		leader, follower = follower, back
	}
	var figs []Figure
	add := func(base, name, unit string, b, v []float64, pick func([]float64) float64) {
		bf := Figure{Name: base, Value: pick(b), Unit: unit, Samples: b}
		figs = append(figs, bf, against(bf, name, pick(v), unit, v))
	}
	p50 := func(v []float64) float64 { return quantile(v, 0.5) }
	p99 := func(v []float64) float64 { return quantile(v, 0.99) }
	add("to the leader: job list (newest 50) p50", "through a follower: job list (newest 50) p50", "ms", dl, fl, p50)
	add("to the leader: job list (newest 50) p99", "through a follower: job list (newest 50) p99", "ms", dl, fl, p99)
	add("to the leader: job show p50", "through a follower: job show p50", "ms", ds, fs, p50)
	add("to the leader: job show p99", "through a follower: job show p99", "ms", ds, fs, p99)
	add("kill -9, the lone server restarted at once: until a job create succeeds (median)",
		"kill -9 of the leader, the follower takes over: until a job create through it succeeds (median)", "ms", restart, failover, medianOf)
	add("kill -9, the lone server restarted at once: until a job create succeeds (worst)",
		"kill -9 of the leader, the follower takes over: until a job create through it succeeds (worst)", "ms", restart, failover,
		func(v []float64) float64 { return quantile(v, 1) })
	return figs, nil
}

// replicaBench is the group's servers, all of one workspace.
type replicaBench struct {
	bin, home, dir string
	env            []string
	servers        []*server
}

type server struct {
	cmd       *exec.Cmd
	addr, url string
}

func (r *replicaBench) start(ctx context.Context) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	return r.startOn(ctx, addr)
}

// startOn starts a server of the workspace on addr and waits until it answers its health check.
func (r *replicaBench) startOn(ctx context.Context, addr string) (*server, error) {
	logf, err := os.OpenFile(filepath.Join(r.dir, "server-"+addr+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(r.bin, "server", "--home", r.home, "--listen", addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = append(append(os.Environ(), r.env...), "HANGAR_HOME="+r.home)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go cmd.Wait()
	s := &server{cmd: cmd, addr: addr, url: "http://" + addr}
	r.servers = append(r.servers, s)
	return s, waitRole(ctx, s.url, "")
}

// takeover kills dead with SIGKILL, gets the server that is to answer next, and times from the
// kill until a job create through that one succeeds.
func (r *replicaBench) takeover(ctx context.Context, dead *server, tok string, next func() (*server, error)) (float64, error) {
	start := time.Now()
	if err := dead.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return 0, err
	}
	for syscall.Kill(dead.cmd.Process.Pid, 0) == nil {
		time.Sleep(time.Millisecond)
	}
	s, err := next()
	if err != nil {
		return 0, err
	}
	c := api.NewClient(s.url, tok)
	sp := job.Spec{Command: "true", Compute: "local"}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.Jobs.Create(cctx, api.CreateJobRequest{Spec: sp})
		cancel()
		if err == nil {
			return float64(time.Since(start)) / float64(time.Millisecond), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no job create succeeded through %s within a minute: %w", s.url, err)
		}
	}
}

func (r *replicaBench) stopAll() {
	for _, s := range r.servers {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
	}
	time.Sleep(time.Second)
	for _, s := range r.servers {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
	}
}

// waitRole waits until the server at url answers its health check saying role ("" for any).
func waitRole(ctx context.Context, url, role string) error {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/health", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			var h api.Health
			ok := json.NewDecoder(resp.Body).Decode(&h) == nil && (role == "" || h.Role == role)
			resp.Body.Close()
			if ok {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer as %q within 30 s", url, role)
		}
	}
}
