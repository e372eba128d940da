package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tick"
)

// Layout of a run directory on the node.
const (
	WorkDirName   = "wd"
	UserLogsDir   = "user_logs"
	SystemLogsDir = "system_logs"
	StdLogFile    = "std_log.txt"
	MetricsFile   = "metrics.jsonl"
	ResultFile    = job.ResultFile
	// ConfigFile is where every backend writes the supervisor's config (api.SupervisorConfig)
	// in the run directory; the supervisor removes the run token from it when it is done.
	ConfigFile = "supervisor.json"
)

// Supervisor executes one run.
type Supervisor struct {
	cfg   api.SupervisorConfig
	conn  *conn
	log   *slog.Logger
	spec  *api.RunSpec
	cache *blob.Store
	local *blob.Store // optional: the server's own store on the same machine
	// direct is set when the workspace has several servers (design 0020) and this supervisor
	// reaches them at their own addresses; relayURL is then the loopback relay the run's MLflow
	// client uses (relay.go).
	direct   bool
	relayURL string

	reports chan api.StatusReport
	// reported is closed when the report loop has sent everything queued before it was stopped.
	reported chan struct{}

	cancelOnce sync.Once
	canceled   chan struct{}
	cancelWhy  string
	// interrupted marks a stop that was no cancel (see Interrupt).
	interrupted bool

	// diskFull is the first write the node's full disk refused (the log, outputs): the run
	// fails with it (failIfDiskFull).
	diskFull error

	// tokenSaved is when a renewed token was last written to the config file; tokenGone is set
	// once it was removed from it.
	tokenSaved time.Time
	tokenMu    sync.Mutex
	tokenGone  bool

	mu       sync.Mutex
	warnings []string
	warned   map[string]bool
	timings  map[string]float64

	// boundCommand (under mu) is the command bound to this node's inputs and outputs, reported
	// with Running so that job show prints what ran.
	boundCommand string

	// secrets are the run's secrets, bound and redacted (secretenv.go).
	secrets *secretEnv
	// stores holds the credentials of the datastores the run's data is in (objectdata.go).
	stores storeAccess

	// notes routes the node's shutdown notices to the checkpoint saver (checkpoint.go).
	notes notices

	// The parts, by noun (parts.go).
	inputs      *inputFetcher
	environment *runEnvironment
	ranks       *rankLauncher
	outputs     *outputCollector
	serving     *replicaServer
	checkpoints *checkpointing
}

// New prepares a supervisor from its config file contents.
func New(cfg api.SupervisorConfig, log *slog.Logger) (*Supervisor, error) {
	cache, err := blob.Open(cfg.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("open blob cache: %w", err)
	}
	verify, err := api.WithCA([]byte(cfg.ServerCA), cfg.ServerName)
	if err != nil {
		return nil, fmt.Errorf("supervisor config: server_ca: %w", err)
	}
	sec := &secretEnv{}
	log = slog.New(redactHandler{next: log.Handler(), env: sec}) // secretenv.go
	s := assemble(&Supervisor{
		cfg: cfg, log: log, cache: cache, secrets: sec,
		conn:     newConn(api.NewClient(cfg.ServerURL, cfg.Token, verify), cfg.ServerURLFile, log, maxOffline(cfg)),
		reports:  make(chan api.StatusReport, 64),
		reported: make(chan struct{}),
		canceled: make(chan struct{}),
		warned:   map[string]bool{},
	})
	if cfg.LocalBlobDir != "" {
		if st, err := os.Stat(cfg.LocalBlobDir); err == nil && st.IsDir() {
			s.local, _ = blob.Open(cfg.LocalBlobDir)
		}
	}
	return s, nil
}

// Cancel stops the run: the user's processes get SIGTERM, then SIGKILL after the grace period,
// and outputs and logs are still collected. Safe to call more than once.
func (s *Supervisor) Cancel(reason string) {
	s.cancelOnce.Do(func() {
		s.cancelWhy = reason
		close(s.canceled)
	})
}

// Interrupt stops the run as Cancel does, for a stop nobody asked Hangar for (Kubernetes
// deleting or evicting the pod): the run ends Failed with the reason, not Canceled.
func (s *Supervisor) Interrupt(reason string) {
	s.cancelOnce.Do(func() {
		s.cancelWhy, s.interrupted = reason, true
		close(s.canceled)
	})
}

// stopState is how a run stopped for reason ends: Failed when it was interrupted, else Canceled.
func (s *Supervisor) stopState(reason string) job.State {
	if s.interrupted && reason == s.cancelWhy {
		return job.Failed
	}
	return job.Canceled
}

// OnSignal is the supervisor's answer to SIGTERM or SIGINT. In a Kubernetes pod the signal says
// only that the pod is stopping: the server says whether that is a cancel (Hangar deletes the
// Job after the cancel is recorded); otherwise Kubernetes stopped it by itself. Elsewhere the
// signal is a cancel (or, under Slurm, its time limit).
func (s *Supervisor) OnSignal(ctx context.Context) {
	if !s.cfg.Pod {
		s.Cancel(SignalReason(ctx))
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if reply, err := s.conn.c.Runs.Heartbeat(ctx, s.cfg.RunID); err == nil && reply.Cancel {
		s.Cancel(stopReason(reply))
		return
	}
	s.Interrupt(s.serving.podStopReason())
}

func (s *Supervisor) isCanceled() bool { return closed(s.canceled) }

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// warn records a warning on the run (sent with the next status report), once per text.
func (s *Supervisor) warn(msg string) {
	msg = s.secrets.redactText(msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.warned[msg] {
		return
	}
	s.warned[msg] = true
	s.warnings = append(s.warnings, msg)
	s.log.Warn(msg)
}

func (s *Supervisor) takeWarnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.warnings
	s.warnings = nil
	return w
}

// Run executes the run to its end and reports the result. It returns an error only when the run
// could not even be fetched; every later failure becomes the run's Failed status.
func (s *Supervisor) Run(ctx context.Context) error {
	defer s.forgetToken()
	defer s.checkpoints.listenNotices()()
	if err := s.fetchSpec(ctx); err != nil {
		res := job.Result{State: job.Failed, Reason: "fetch run spec: " + err.Error(), Time: time.Now().UTC()}
		_ = s.writeResult(res)
		return err
	}
	reportCtx, stopReports := context.WithCancel(context.WithoutCancel(ctx))
	defer stopReports()
	go s.reportLoop(reportCtx)
	hbCtx, stopHB := context.WithCancel(ctx)
	go s.heartbeatLoop(hbCtx)
	relayCtx, stopRelay := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRelay()
	if u, err := s.startRelay(relayCtx); err != nil { // relay.go
		s.log.Warn("no relay for the run's MLflow client: it talks to one server", "err", err)
	} else {
		s.relayURL = u
	}

	res := s.failIfDiskFull(s.execute(ctx))
	res.Reason = s.secrets.redactText(res.Reason)
	stopHB()
	if err := s.writeResult(res); err != nil {
		s.log.Error("write result file", "err", err)
	}
	s.finalReport(ctx, res)
	return nil
}

func (s *Supervisor) fetchSpec(ctx context.Context) error {
	return s.conn.retry(ctx, "fetch spec", func(ctx context.Context) error {
		spec, err := s.conn.c.Runs.Spec(ctx, s.cfg.RunID, s.cfg.NodeID)
		if err == nil {
			if len(s.cfg.Nodes) > 0 { // the engine placed the nodes and named them
				spec.Nodes, spec.NodeRank = s.cfg.Nodes, s.cfg.NodeRank
			}
			s.spec = spec
			s.conn.c.SetAttempt(spec.Attempt)
			// A supervisor that reaches the servers directly learns them all (a tunnel's or a
			// load balancer's address is kept, and the run's MLflow client goes there).
			s.direct = spec.Servers != "" && s.conn.c.SetServers(spec.Servers)
			s.renew(spec.Token)
			if spec.Token != "" {
				// The command's processes get this one (HANGAR_RUN_TOKEN, for `hangar mpi-rsh`):
				// fresh at the start, where the config's may have waited in a queue.
				s.cfg.Token = spec.Token
			}
		}
		return err
	})
}

func (s *Supervisor) writeResult(r job.Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(s.cfg.Dir, ResultFile)
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// report queues a phase change; reports are sent in order by reportLoop. Only the leading node of
// a multi-node run reports phases.
func (s *Supervisor) report(state job.State, reason string) {
	if s.worker() {
		return
	}
	r := api.StatusReport{State: state, Reason: s.secrets.redactText(reason), Time: time.Now().UTC()}
	if state == job.Running {
		s.mu.Lock()
		r.Command = s.boundCommand
		s.mu.Unlock()
	}
	s.reports <- r
}

// worker reports whether this supervisor runs a non-leading node of a multi-node run: it runs its
// ranks and ships its log (as std_log_node_<rank>.txt), and reports only a failure; node 0
// reports the run's phases and collects its outputs.
func (s *Supervisor) worker() bool { return s.spec != nil && s.spec.NodeRank > 0 }

// reportLoop sends queued reports in order, retrying each until the server takes it.
func (s *Supervisor) reportLoop(ctx context.Context) {
	defer close(s.reported)
	for {
		select {
		case <-ctx.Done():
			return
		case r, ok := <-s.reports:
			if !ok {
				return
			}
			r.Warnings, r.Timings = s.takeWarnings(), s.takeTimings()
			err := s.conn.retry(ctx, "report "+string(r.State), func(ctx context.Context) error {
				reply, err := s.conn.c.Runs.ReportStatus(ctx, s.cfg.RunID, r)
				if err == nil && reply.Cancel {
					s.Cancel(stopReason(reply))
				}
				return err
			})
			if err != nil && ctx.Err() == nil {
				s.log.Error("status report refused", "state", r.State, "err", err)
			}
		}
	}
}

func (s *Supervisor) heartbeatLoop(ctx context.Context) {
	every := time.Duration(s.spec.HeartbeatSeconds) * time.Second
	if every <= 0 {
		every = 5 * time.Second
	}
	tick.Every(ctx.Done(), every, func() { s.heartbeat(ctx, every) })
}

// heartbeat tells the server the run is alive (within every) and acts on its reply: a renewed
// token, the servers, a cancel.
func (s *Supervisor) heartbeat(ctx context.Context, every time.Duration) {
	hctx, cancel := context.WithTimeout(ctx, every)
	reply, err := s.conn.c.Runs.Heartbeat(hctx, s.cfg.RunID)
	cancel()
	if err != nil && api.IsServerError(err) && api.Permanent(err) {
		// The run ended (or moved to another attempt) and its token is refused: nothing
		// this supervisor does can count any more.
		s.Cancel("the workspace server no longer accepts this run's supervisor: " + err.Error())
		return
	}
	if err != nil {
		s.conn.reresolve()
		return
	}
	s.conn.answered()
	s.renew(reply.Token)
	if s.direct && reply.Servers != "" {
		s.conn.c.SetServers(reply.Servers) // servers that joined since, or left
	}
	if reply.Cancel {
		s.Cancel(stopReason(reply))
	}
}

// stopReason is why the server stops the run: another node's failure, or a cancel.
func stopReason(r *api.StatusReply) string {
	if r.Reason != "" {
		return "stopped: " + r.Reason
	}
	return "canceled by request"
}

// renew makes every later call use a fresh run token (tokens expire; the server hands out new
// ones with the spec and heartbeat replies). The config file gets it too, now and then, for a
// stand-in (Salvage) should this supervisor be killed late in a long run.
func (s *Supervisor) renew(token string) {
	if token == "" {
		return
	}
	s.conn.c.SetToken(token)
	if time.Since(s.tokenSaved) > tokenSaveEvery {
		s.tokenSaved = time.Now()
		s.saveToken(token)
	}
}

// tokenSaveEvery is how often a renewed token is written to the config file: well within the
// tokens' lifetime, without rewriting the file at every heartbeat.
const tokenSaveEvery = time.Hour

// forgetToken rewrites the config file without the run token once the supervisor is done: the
// token must not outlive the run on the node's disk. Nothing needs it afterwards: backends
// re-attach through handle.json and result.json. Other fields are kept as they are.
func (s *Supervisor) forgetToken() { s.saveToken("") }

// saveToken rewrites the config file with another token ("" removes it, for good: a heartbeat
// answered late cannot put it back).
func (s *Supervisor) saveToken(token string) {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	if s.tokenGone {
		return
	}
	s.tokenGone = token == ""
	path := filepath.Join(s.cfg.Dir, ConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		if !os.IsNotExist(err) {
			s.log.Warn("rewrite the run token in the config", "err", err)
		}
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		s.log.Warn("rewrite the run token in the config", "file", path, "err", err)
		return
	}
	var id string
	if _, has := m["token"]; !has || json.Unmarshal(m["run_id"], &id) != nil || id != s.cfg.RunID {
		return // not this run's config, or already without a token
	}
	delete(m, "token")
	if token != "" {
		m["token"], _ = json.Marshal(token)
	}
	if b, err = json.MarshalIndent(m, "", "  "); err == nil {
		if err = os.WriteFile(path+".tmp", b, 0o600); err == nil {
			err = os.Rename(path+".tmp", path)
		}
	}
	if err != nil {
		s.log.Warn("rewrite the run token in the config", "file", path, "err", err)
	}
}

// finalReport sends the terminal status after everything queued before it, waiting up to a day
// for the server to come back; the result file stays on disk for the server to read meanwhile.
func (s *Supervisor) finalReport(ctx context.Context, res job.Result) {
	close(s.reports)
	<-s.reported
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 24*time.Hour)
	defer cancel()
	if s.worker() {
		if res.State != job.Failed {
			s.log.Info("node done", "state", res.State)
			return
		}
		res.Reason = fmt.Sprintf("node %d: %s", s.spec.NodeRank, res.Reason)
	}
	r := api.StatusReport{State: res.State, Reason: res.Reason, ExitCode: res.ExitCode, Time: res.Time,
		Warnings: s.takeWarnings(), Timings: s.takeTimings(), Node: s.spec.NodeRank}
	err := s.conn.retry(ctx, "report "+string(res.State), func(ctx context.Context) error {
		_, err := s.conn.c.Runs.ReportStatus(ctx, s.cfg.RunID, r)
		return err
	})
	if errors.Is(err, ErrServerGone) {
		s.log.Error("giving up on the workspace server; the run's files and result stay in its directory, for `hangar reap` or a returning server to collect",
			"state", res.State, "dir", s.cfg.Dir, "err", err)
		return
	}
	if err != nil {
		s.log.Error("final status not reported", "state", res.State, "err", err)
		return
	}
	s.log.Info("run ended", "state", res.State, "reason", res.Reason)
}

// MaxOfflineEnv bounds, on a node, how long its supervisors keep trying to reach an absent
// workspace server (a Go duration, e.g. 2h): it wins over the run's config.
const MaxOfflineEnv = "HANGAR_SUPERVISOR_MAX_OFFLINE"

// maxOffline is how long the supervisor keeps trying to reach an absent server: the node's
// MaxOfflineEnv, else the config's, else a day. Its files stay on the node either way.
func maxOffline(cfg api.SupervisorConfig) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(MaxOfflineEnv)); err == nil && d > 0 {
		return d
	}
	if cfg.MaxOfflineSeconds > 0 {
		return time.Duration(cfg.MaxOfflineSeconds) * time.Second
	}
	return 24 * time.Hour
}

// SignalReason says why a cancel signal came: under Slurm, the job's time limit when scontrol says
// so (Slurm signals every process of a job that reached it), else a cancel request.
func SignalReason(ctx context.Context) string {
	id := os.Getenv("SLURM_JOB_ID")
	if id == "" {
		return "canceled by request"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "scontrol", "show", "job", id).Output()
	if err == nil && (strings.Contains(string(out), "Reason=TimeLimit") || strings.Contains(string(out), "JobState=TIMEOUT")) {
		return "TIMEOUT: the job reached its Slurm time limit"
	}
	return "canceled by request"
}
