package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
)

// AccessOptions size the access group.
type AccessOptions struct {
	Requests int // sequential requests per case and round
	Rounds   int // rounds (Requests × Rounds requests per case in all, interleaved across cases)
}

// Access measures what users and TLS cost an API call: `GET /api/jobs?limit=50` (the first page
// of `job list`) one request at a time, with the workspace token over plain HTTP (the baseline),
// with a user's personal token (looked up in the store on every request) and both over HTTPS
// (`--tls`, the generated certificate); on kept-alive connections (the studio, an SDK) and with a
// new connection per request (what one CLI command pays: TCP, and the TLS handshake). Two servers
// on loopback, each its own workspace, both idle but for the calls.
func Access(ctx context.Context, bin, dir string, o AccessOptions) ([]Figure, error) {
	type side struct {
		name string
		si   *home.ServerInfo
		tok  map[string]string // "workspace", "personal"
		stop func()
	}
	var sides []side
	defer func() {
		for _, s := range sides {
			s.stop()
		}
	}()
	for _, tls := range []bool{false, true} {
		name := map[bool]string{false: "HTTP", true: "HTTPS"}[tls]
		si, tok, stop, err := startAccessServer(ctx, bin, filepath.Join(dir, "access-"+name), tls)
		if err != nil {
			return nil, fmt.Errorf("%s server: %w", name, err)
		}
		sides = append(sides, side{name: name, si: si, stop: stop, tok: map[string]string{"workspace": tok}})
		admin, err := si.Client(tok)
		if err != nil {
			return nil, err
		}
		u, err := admin.Users.Create(ctx, api.CreateUserRequest{Name: "bench", Role: api.RoleReader})
		if err != nil {
			return nil, fmt.Errorf("%s server: create a user: %w", name, err)
		}
		sides[len(sides)-1].tok["personal"] = u.Token.Token
	}
	type kase struct {
		name   string
		client *api.Client
	}
	var cases []kase
	for _, s := range sides {
		for _, who := range []string{"workspace", "personal"} {
			for _, keep := range []bool{true, false} {
				c, err := s.si.Client(s.tok[who])
				if err != nil {
					return nil, err
				}
				api.WithKeepAlive(keep)(c)
				conn := map[bool]string{true: "kept-alive connection", false: "new connection per request"}[keep]
				cases = append(cases, kase{fmt.Sprintf("%s, %s token, %s", s.name, who, conn), c})
			}
		}
	}
	samples := make([][]float64, len(cases))
	// Interleaved request by request, so that every case sees the same machine and the same
	// moments of load (a case run as a block after another shows their order, not their cost).
	for range o.Rounds * o.Requests {
		for i, k := range cases {
			{
				d, err := timeIt(func() error { _, err := k.client.Jobs.List(ctx, 50); return err })
				if err != nil {
					return nil, fmt.Errorf("%s: %w", k.name, err)
				}
				samples[i] = append(samples[i], float64(d)/float64(time.Millisecond))
			}
		}
	}
	return accessFigures(names(cases, func(k kase) string { return k.name }), samples), nil
}

// accessFigures turns each case's latencies into p50 and p99 figures, each against the same
// quantile of the plain-HTTP, workspace-token case of its connection kind (cases alternate kept-
// alive and new connections; the first two are those baselines).
func accessFigures(names []string, samples [][]float64) []Figure {
	var figs []Figure
	for _, q := range []struct {
		label string
		q     float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		var base [2]Figure
		for i, n := range names {
			f := Figure{Name: n + ", " + q.label, Value: quantile(samples[i], q.q), Unit: "ms"}
			if i < 2 {
				base[i] = f
			} else {
				f = against(base[i%2], f.Name, f.Value, "ms", nil)
			}
			figs = append(figs, f)
		}
	}
	return figs
}

func names[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// startAccessServer starts `hangar server` on a loopback port in its own workspace home.
func startAccessServer(ctx context.Context, bin, homeDir string, tls bool) (*home.ServerInfo, string, func(), error) {
	args := []string{"server", "--home", homeDir, "--listen", "127.0.0.1:0"}
	if tls {
		args = append(args, "--tls")
	}
	if err := os.MkdirAll(homeDir, 0o700); err != nil {
		return nil, "", nil, err
	}
	logf, err := os.Create(homeDir + ".log")
	if err != nil {
		return nil, "", nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = append(os.Environ(), "HANGAR_HOME="+homeDir)
	if err := cmd.Start(); err != nil {
		return nil, "", nil, err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	h := home.Home{Dir: homeDir}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		si, err := h.Running(ctx)
		if err == nil {
			tok, err := h.ReadToken()
			if err != nil {
				stop()
				return nil, "", nil, err
			}
			return si, tok, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, "", nil, fmt.Errorf("did not start (log: %s.log): %w", homeDir, err)
		}
	}
}
