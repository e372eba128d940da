package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// A pod of an online deployment's Kubernetes Deployment is not made for one run: its config is
// a claim file (the server's URL and the Deployment's claim token), and the pod claims one of
// the Deployment's replica runs (POST /api/replica-claims), supervises it as a Job's pod would,
// and when that run ends claims the next (the serving controller's replacement), until
// Kubernetes stops the pod.

// ClaimConfig is the claim part of such a pod's config file ({"claim": {...}}).
type ClaimConfig struct {
	ServerURL string `json:"server_url"`
	Token     string `json:"token"`
	// ServerCA is the PEM an https server is verified with (as SupervisorConfig.ServerCA).
	ServerCA string `json:"server_ca,omitempty"`
}

// podNameEnv is where the pod's name is (the downward API).
const podNameEnv = "HANGAR_POD_NAME"

// claimBackoff bounds the wait between two claims that found no run.
var claimBackoff = [2]time.Duration{500 * time.Millisecond, 10 * time.Second}

// errDenied is a claim the server refused for good (the token or the pod is wrong).
var errDenied = errors.New("replica claim refused")

// readClaim returns the claim part of the config file, when it is a claim file.
func readClaim(path string) (*ClaimConfig, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var f struct {
		Claim *ClaimConfig `json:"claim"`
	}
	if json.Unmarshal(data, &f) != nil || f.Claim == nil {
		return nil, false
	}
	return f.Claim, true
}

// runClaims claims and supervises runs one after the other until the pod is stopped. The
// termination message is the last run's result.
func (e PodEntry) runClaims(ctx context.Context, claim ClaimConfig, sig *signals) int {
	pod := os.Getenv(podNameEnv)
	for {
		cfg, err := claimRun(ctx, claim, pod, sig.stopped, e.Log)
		if err != nil {
			if sig.received() || ctx.Err() != nil {
				return 0
			}
			e.Log.Error("claim a replica run", "err", err)
			_ = os.WriteFile(e.TerminationLog, []byte(err.Error()), 0o644)
			return 1
		}
		e.Log.Info("claimed a replica run", "run", cfg.RunID, "pod", pod)
		res := e.claimed(ctx, cfg, sig)
		e.closeGate(cfg, res)
		if err := os.WriteFile(e.TerminationLog, TerminationMessage(res), 0o644); err != nil {
			e.Log.Error("write the termination message", "path", e.TerminationLog, "err", err)
		}
		if sig.received() {
			if res.State == job.Completed || res.State == job.Canceled {
				return 0
			}
			return 1
		}
		e.Log.Info("the replica run ended; claiming another", "run", cfg.RunID, "state", res.State)
	}
}

// claimed writes the claimed run's config into its directory and supervises it.
func (e PodEntry) claimed(ctx context.Context, cfg api.SupervisorConfig, sig *signals) job.Result {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return job.Result{State: job.Failed, Reason: "pod entry: " + err.Error(), Time: time.Now().UTC()}
	}
	out, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(filepath.Join(cfg.Dir, "supervisor.json"), out, 0o600); err != nil {
		return job.Result{State: job.Failed, Reason: "pod entry: " + err.Error(), Time: time.Now().UTC()}
	}
	return e.result(ctx, cfg, sig)
}

// claimRun asks the server for a run until it gets one, the server refuses for good, or the pod
// is stopped. Nothing to claim yet, and a server that does not answer, are waited out.
func claimRun(ctx context.Context, claim ClaimConfig, pod string, stopped <-chan struct{}, log interface {
	Info(string, ...any)
}) (api.SupervisorConfig, error) {
	wait := claimBackoff[0]
	for {
		cfg, err := claimOnce(ctx, claim, pod)
		if err == nil || errors.Is(err, errDenied) {
			return cfg, err
		}
		log.Info("no replica run yet", "why", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return cfg, ctx.Err()
		case <-stopped:
			t.Stop()
			return cfg, errors.New("stopped before a run was claimed")
		case <-t.C:
		}
		wait = min(2*wait, claimBackoff[1])
	}
}

func claimOnce(ctx context.Context, claim ClaimConfig, pod string) (api.SupervisorConfig, error) {
	body, _ := json.Marshal(api.ReplicaClaimRequest{Pod: pod})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(claim.ServerURL, "/")+"/api/replica-claims", bytes.NewReader(body))
	if err != nil {
		return api.SupervisorConfig{}, fmt.Errorf("%w: server_url %q: %v", errDenied, claim.ServerURL, err)
	}
	req.Header.Set("Authorization", "Bearer "+claim.Token)
	req.Header.Set("Content-Type", "application/json")
	hc := http.DefaultClient
	if claim.ServerCA != "" {
		tc, err := api.TLSConfig([]byte(claim.ServerCA), "")
		if err != nil {
			return api.SupervisorConfig{}, fmt.Errorf("%w: server_ca: %v", errDenied, err)
		}
		hc = &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return api.SupervisorConfig{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusOK:
		var c api.ReplicaClaim
		if err := json.Unmarshal(data, &c); err != nil || c.RunID == "" || c.Config.RunID != c.RunID || c.Config.Dir == "" {
			return api.SupervisorConfig{}, fmt.Errorf("the server's claim answer %.200q is not a claimed run", data)
		}
		return c.Config, nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound:
		return api.SupervisorConfig{}, fmt.Errorf("%w: %s: %.300s", errDenied, resp.Status, data)
	}
	return api.SupervisorConfig{}, fmt.Errorf("%s: %.300s", resp.Status, data)
}
