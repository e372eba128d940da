package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// On Kubernetes a replica whose image serves by its own entrypoint is a pod of its online
// deployment's Deployment whose main container is the image and whose supervisor is a sidecar
// beside it (api.SupervisorConfig.ServeGate; internal/backend/kubernetes/sidecar.go). The
// supervisor runs no command there: it links the claimed run's model where the image's
// container mounts it, opens the gate (the image starts only then), probes the readiness route
// on the pod's own network, reports the address, and relays the image's output, which only the
// server can read (pods/log), into the run's log.
//
// The kubelet restarts an image that exits, with its backoff (the pod's restartPolicy Always);
// the run stays alive while the pod lives, and the relay writes the restart into its log. The
// run ends when the pod is stopped (a cancel, a scale-down, an eviction).

// GateReady is what the gate file says when the image may start; anything else is why not.
const GateReady = "ready"

// relayFollow is how long one request follows the image's output; relayPause is the pause
// between requests (also how often a container that has not started is asked about again).
const (
	relayFollow = 30 * time.Second
	relayPause  = time.Second
)

func (s *replicaServer) sidecar() bool { return s.cfg.ServeGate != "" }

// prepareSidecar checks that the model input is where the pod mounts it into the image's
// container, and takes the image's own port as the replica's.
func (s *replicaServer) prepareSidecar(w *workspace, values map[string]string) error {
	sv := s.spec.Spec.Serve
	if sv.Port < 1 || sv.Port > 65535 {
		return fmt.Errorf("serve: environment.inference_config: port %d is not a port", sv.Port)
	}
	if sv.ModelInput != "" {
		if s.cfg.ServeModel == "" {
			return fmt.Errorf("serve: the pod mounts no model into the image's container")
		}
		if err := linkModel(values["inputs."+sv.ModelInput], s.cfg.ServeModel); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	w.servePort, w.sidecar = sv.Port, true
	return nil
}

// linkModel points link, the path every pod's image container mounts its model from, at the
// materialized model: relative, so that it resolves inside the volume the kubelet mounts from
// (which refuses a path that leaves it).
func linkModel(model, link string) error {
	model, link = filepath.Clean(model), filepath.Clean(link)
	if model == link {
		return nil
	}
	rel, err := filepath.Rel(filepath.Dir(link), model)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("the model was materialized at %s, outside the folder of %s that the pod mounts into the image's container", model, link)
	}
	tmp := link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return fmt.Errorf("link the model for the image's container: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		return fmt.Errorf("link the model for the image's container: %w", err)
	}
	return nil
}

// runSidecar opens the gate and serves until the run is stopped (its pod's SIGTERM, or a
// cancel), relaying the image's output meanwhile, restarts included.
func (s *replicaServer) runSidecar(ctx context.Context, w *workspace, p *pipeline) job.Result {
	if err := WriteGate(s.cfg.ServeGate, GateReady); err != nil {
		return job.Result{State: job.Failed, Reason: fmt.Sprintf("serve: open the gate: %v", err)}
	}
	fmt.Fprintf(p.capt, "Starting %s with its own entrypoint as the pod's main container; it serves on port %d\n",
		s.spec.Spec.Environment.Image, w.servePort)
	s.report(job.Running, "")
	sctx, stop := context.WithCancel(ctx)
	go s.announce(sctx, w.servePort)
	r := &logRelay{c: s.conn.c, runID: s.cfg.RunID, out: p.capt}
	relayed := make(chan struct{})
	go func() { defer close(relayed); r.follow(sctx, s.warn) }()
	<-s.canceled
	reason := s.cancelWhy
	stop()
	<-relayed
	// What the container wrote since the last line relayed (it has ended, or is stopping).
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	if _, err := r.once(tctx, 0); err != nil {
		s.warn("serve: the image's last output could not be read: " + err.Error())
	}
	cancel()
	return job.Result{State: s.stopState(reason), Reason: reason, Time: time.Now().UTC()}
}

// podStopReason is why a pod's supervisor was stopped by Kubernetes rather than by a cancel.
func (s *replicaServer) podStopReason() string {
	if s.sidecar() {
		return "Kubernetes stopped the pod of the replica (its Deployment was scaled down or deleted, or the pod was evicted, preempted or its node drained), not a cancel from Hangar; the replica's log has the image's output"
	}
	return "Kubernetes stopped the pod (its Job was deleted, or the pod was evicted, preempted or its node drained), not a cancel from Hangar"
}

// logRelay copies the image's output, as the server reads it from Kubernetes, into the run's
// log, from the line after the last one it copied.
type logRelay struct {
	c     *api.Client
	runID string
	out   io.Writer
	since time.Time
}

// follow relays until ctx ends, asking again after each follow ends or fails.
func (r *logRelay) follow(ctx context.Context, warn func(string)) {
	for ctx.Err() == nil {
		if _, err := r.once(ctx, relayFollow); err != nil && ctx.Err() == nil {
			if api.IsServerError(err) && api.Permanent(err) {
				warn("serve: the image's output cannot be relayed into the log: " + err.Error())
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(relayPause):
		}
	}
}

// once relays what one request returns: lines "<RFC 3339 time> <text>".
func (r *logRelay) once(ctx context.Context, follow time.Duration) (int, error) {
	rc, err := r.c.Runs.ContainerLog(ctx, r.runID, r.since, follow)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n := 0
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 2<<20)
	for sc.Scan() {
		stamp, text, _ := strings.Cut(sc.Text(), " ")
		t, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			continue
		}
		if _, err := io.WriteString(r.out, text+"\n"); err != nil {
			return n, err
		}
		r.since, n = t, n+1
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return n, err
	}
	return n, nil
}

// WriteGate writes the gate file at once (a rename): the gate container never reads half of it.
func WriteGate(path, text string) error {
	if err := os.WriteFile(path+".tmp", []byte(text+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// AwaitGate is the gate container (`hangar pod-entry --await FILE`): it waits for the gate file
// and exits 0 when it says ready, 1 with its text otherwise (Kubernetes then runs it again, with
// its backoff, until a run the pod claims opens the gate).
func AwaitGate(ctx context.Context, path string, out io.Writer) int {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			text := strings.TrimSpace(string(b))
			if text == GateReady {
				return 0
			}
			fmt.Fprintf(out, "the supervisor did not start the image: %s\n", text)
			return 1
		}
		select {
		case <-ctx.Done():
			return 1
		case <-t.C:
		}
	}
}
