package supervisor

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/serving/scoring"
)

// A replica (job.Spec.Serve, design 0014) is a run whose command serves HTTP: the supervisor
// gives it a port, the scoring server for a scoring script, and tells the server where it
// answers once its probe does.

// serveProbeEvery is how often a starting replica's probe is tried.
const serveProbeEvery = 100 * time.Millisecond

// prepare sets a replica's variables: PORT, HANGAR_SERVE_HOST (where to listen),
// HANGAR_REPLICA_SECRET (what the router's requests carry), AZUREML_MODEL_DIR, and for a
// scoring script the scoring server written beside the run (HANGAR_SCORING_SERVER),
// AML_APP_ROOT (the code folder) and AZUREML_ENTRY_SCRIPT; for a no-code MLflow model the
// scoring server and the built-in MLflow scorer beside it (HANGAR_MLFLOW_SCORER).
func (s *replicaServer) prepare(w *workspace, values, env map[string]string) error {
	sv := s.spec.Spec.Serve
	if sv == nil {
		return nil
	}
	l, err := s.listen()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if sv.Entrypoint {
		return s.prepareImage(w, l, values, env)
	}
	env[scoring.SecretEnv], env[scoring.HostEnv] = l.secret, l.host
	if sv.ModelInput != "" {
		dir, err := s.inputs.modelDir(values["inputs."+sv.ModelInput], sv.ModelFolder)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		env["AZUREML_MODEL_DIR"] = dir
	}
	port := cmp.Or(sv.Port, s.cfg.ServePort)
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return fmt.Errorf("serve: pick a port: %w", err)
		}
		port = p
	}
	w.servePort = port
	env["PORT"] = strconv.Itoa(port)
	if sv.ScoringScript == "" && !sv.MLflow {
		return nil
	}
	path := filepath.Join(s.cfg.Dir, "hangar", scoring.FileName)
	if err := os.WriteFile(path, scoring.Script(), 0o644); err != nil {
		return fmt.Errorf("serve: write the scoring server: %w", err)
	}
	env["HANGAR_SCORING_SERVER"] = path
	env["AML_APP_ROOT"] = w.dir
	if sv.MLflow {
		scorer := filepath.Join(s.cfg.Dir, "hangar", scoring.MLflowFileName)
		if err := os.WriteFile(scorer, scoring.MLflowScorer(), 0o644); err != nil {
			return fmt.Errorf("serve: write the MLflow scorer: %w", err)
		}
		env[scoring.MLflowEnv] = scorer
		return nil
	}
	env["AZUREML_ENTRY_SCRIPT"] = sv.ScoringScript
	return nil
}

// listen is where a replica listens and what the requests it answers carry.
type listen struct {
	secret string
	// host is the address the replica's server listens on: every address (0.0.0.0) when the
	// router reaches the node at another address than the one on its route to the server (an
	// attached VM behind its SSH tunnel), else only that route's own address, which it reports
	// (loopback on the server's machine, a pod's address, a cluster node's).
	host string
}

// probeHost is where the supervisor itself reaches the replica.
func (l listen) probeHost() string {
	if l.host == "0.0.0.0" {
		return "127.0.0.1"
	}
	return l.host
}

// listen is this replica's listen, from the server's replica config.
func (s *replicaServer) listen() (listen, error) {
	rc := s.spec.Replica
	if rc == nil || rc.Secret == "" {
		return listen{}, fmt.Errorf("the server sent no replica secret with the run (is it older than this supervisor?): a replica answers only requests that carry one")
	}
	if rc.AllInterfaces {
		return listen{secret: rc.Secret, host: "0.0.0.0"}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	host, err := s.localAddress(ctx)
	if err != nil {
		return listen{}, fmt.Errorf("the address to listen on: %w", err)
	}
	return listen{secret: rc.Secret, host: host}, nil
}

// freePort asks the kernel for a port nobody listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// announce waits until the replica's probe answers 200, then reports the address the
// server reaches it at: this node's address on its own route to the server, and the port. It
// gives up when ctx ends (the command ended).
func (s *replicaServer) announce(ctx context.Context, port int) {
	sv := s.spec.Spec.Serve
	host, err := s.localAddress(ctx)
	if err != nil {
		s.warn("serve: cannot tell the server where this replica answers: " + err.Error())
		return
	}
	l := listen{host: host}
	if rc := s.spec.Replica; rc != nil {
		l.secret = rc.Secret
		if rc.AllInterfaces {
			l.host = "0.0.0.0"
		}
	}
	probe := "http://" + net.JoinHostPort(l.probeHost(), strconv.Itoa(port)) + sv.Probe
	client := &http.Client{Timeout: 2 * time.Second}
	t := time.NewTicker(serveProbeEvery)
	defer t.Stop()
	for {
		if ok := probeOK(ctx, client, probe, l.secret); ok {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	err = s.conn.retry(ctx, "report the replica's address", func(ctx context.Context) error {
		return s.conn.c.Runs.ReportServing(ctx, s.cfg.RunID, addr)
	})
	if err != nil && ctx.Err() == nil {
		s.warn("serve: report the replica's address: " + err.Error())
		return
	}
	s.log.Info("serving", "address", addr)
}

func probeOK(ctx context.Context, client *http.Client, url, secret string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	req.Header.Set(scoring.SecretHeader, secret)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// localAddress is this node's address on its route to the server: the address the server can
// reach a replica at (a loopback server gets loopback; a pod, its pod IP).
func (s *replicaServer) localAddress(ctx context.Context) (string, error) {
	u, err := url.Parse(s.conn.c.BaseURL())
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	hostport := net.JoinHostPort(u.Hostname(), port)
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return "", fmt.Errorf("reach the server at %s: %w", hostport, err)
	}
	defer c.Close()
	host, _, err := net.SplitHostPort(c.LocalAddr().String())
	return host, err
}
