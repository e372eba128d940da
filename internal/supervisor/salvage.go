package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// Salvage stands in for a supervisor that is gone without a result (killed, its machine
// restarted): from the run's directory it ships the log lines and metrics the supervisor had
// spooled but not sent, collects and registers the node's logs and outputs, and writes the
// result file with why, so that the backend reports the run ended. The run's processes must have
// been ended first (runbox.Reap). The config is the run's supervisor.json; without its token
// (the supervisor finished, or never started) nothing can be sent and only the result is written.
func Salvage(ctx context.Context, dir, why string, log *slog.Logger) job.Result {
	res := job.Result{State: job.Failed, Reason: why}
	if err := salvage(ctx, dir, log); err != nil {
		res.Reason += "; its spooled logs and outputs could not be collected: " + err.Error()
	} else {
		res.Reason += "; its spooled logs and outputs were collected"
	}
	res.Time = time.Now().UTC()
	s := assemble(&Supervisor{cfg: api.SupervisorConfig{Dir: dir}, log: log})
	if err := s.writeResult(res); err != nil {
		res.Reason += "; the result could not be written: " + err.Error()
	}
	return res
}

func salvage(ctx context.Context, dir string, log *slog.Logger) error {
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return err
	}
	var cfg api.SupervisorConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %w", ConfigFile, err)
	}
	if cfg.Token == "" {
		return errors.New("the run's token is gone")
	}
	s, err := New(cfg, log)
	if err != nil {
		return err
	}
	s.conn.maxOffline = time.Minute // a stand-in does not wait a day for the server
	if err := s.fetchSpec(ctx); err != nil {
		return fmt.Errorf("fetch the run: %w", err)
	}
	w := &workspace{dir: filepath.Join(dir, WorkDirName), outputDirs: map[string]string{}}
	for name := range s.spec.Spec.Outputs {
		w.outputDirs[name] = filepath.Join(dir, "named-outputs", name)
	}
	shipAs := StdLogFile
	if s.worker() {
		shipAs = NodeLogFile(s.spec.NodeRank)
	}
	logs := newShipper(filepath.Join(dir, UserLogsDir, StdLogFile), logSender(s.conn, cfg.RunID, shipAs), log)
	if err := logs.shipAll(ctx, true); err != nil {
		return fmt.Errorf("ship the log: %w", err)
	}
	if !s.worker() {
		metrics := newShipper(s.metricsFile(), metricSender(s.conn, cfg.RunID, s.spec.Attempt, s.warn), log)
		if err := metrics.shipAll(ctx, true); err != nil {
			return fmt.Errorf("ship the metrics: %w", err)
		}
	}
	return s.outputs.deliver(ctx, w)
}

// deliver collects this node's artifacts, uploads them and registers them once (a stand-in does
// not wait for the other nodes' parts).
func (s *outputCollector) deliver(ctx context.Context, w *workspace) error {
	report, files, manifests, err := s.collect(ctx, w)
	if err != nil {
		return fmt.Errorf("collect outputs: %w", err)
	}
	if err := s.upload(ctx, files, manifests); err != nil {
		return err
	}
	report.Node = s.spec.NodeRank
	return s.conn.retry(ctx, "register outputs", func(ctx context.Context) error {
		_, err := s.conn.c.Runs.ReportArtifacts(ctx, s.cfg.RunID, report)
		return err
	})
}
