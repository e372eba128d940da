package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// shipper sends the lines appended to a file to the server, in order, until acknowledged.
// One shipment at a time: mu keeps the background loop and the final shipment from reading
// the same lines and then each judging the other's acknowledgement.
type shipper struct {
	mu       sync.Mutex
	t        *tail
	send     func(ctx context.Context, lines []tailLine) (acked int64, err error)
	kick     chan struct{}
	interval time.Duration
	log      *slog.Logger
}

func newShipper(path string, send func(ctx context.Context, lines []tailLine) (int64, error), log *slog.Logger) *shipper {
	return &shipper{t: &tail{path: path}, send: send, kick: make(chan struct{}, 1), interval: 500 * time.Millisecond, log: log}
}

// poke asks for a shipment soon (new data was written).
func (s *shipper) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// run ships as data arrives until ctx ends; errors are retried by send (it blocks while the server is away).
func (s *shipper) run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		if err := s.shipAll(ctx, false); err != nil && ctx.Err() == nil {
			s.log.Warn("ship failed", "file", s.t.path, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			// Batch what arrives in the next few milliseconds with this line.
			time.Sleep(20 * time.Millisecond)
		case <-t.C:
		}
	}
}

// shipAll sends everything available now; with final set, a trailing partial line too.
func (s *shipper) shipAll(ctx context.Context, final bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		lines, err := s.t.read(2000, 1<<20, final)
		if err != nil {
			return fmt.Errorf("read %s: %w", s.t.path, err)
		}
		if len(lines) == 0 {
			return nil
		}
		acked, err := s.send(ctx, lines)
		if err != nil {
			return err
		}
		before := s.t.seq
		if acked < before {
			// The server lost lines it had acknowledged (its workspace was restored from a
			// backup): send them again from the spool, which keeps every line.
			s.log.Warn("the server lacks lines it had acknowledged; resending them", "file", s.t.path, "acked", acked, "had", before)
			if err := s.t.rewind(acked); err != nil {
				return fmt.Errorf("read %s: %w", s.t.path, err)
			}
			continue
		}
		s.t.ack(lines, acked)
		if s.t.seq == before {
			return fmt.Errorf("server acknowledged %d, expected more than %d", acked, before)
		}
	}
}

// logSender ships log lines of one file.
func logSender(c *conn, runID, file string) func(ctx context.Context, lines []tailLine) (int64, error) {
	return func(ctx context.Context, lines []tailLine) (int64, error) {
		b := api.LogBatch{File: file, Lines: make([]job.LogLine, len(lines))}
		now := time.Now().UTC()
		for i, l := range lines {
			b.Lines[i] = job.LogLine{Seq: l.seq, Text: l.text, Time: now}
		}
		ack, err := retryValue(ctx, c, "ship logs", func(ctx context.Context) (*api.Ack, error) {
			return c.c.Runs.ShipLogs(ctx, runID, b)
		})
		if err != nil {
			return 0, err
		}
		return ack.Acked, nil
	}
}

// metricLine is one line of $HANGAR_METRICS_FILE.
type metricLine struct {
	Name      string   `json:"name"`
	Value     *float64 `json:"value"`
	Step      int64    `json:"step"`
	Timestamp *float64 `json:"timestamp"` // seconds since the epoch
}

// parseMetric decodes a metrics-file line.
func parseMetric(text string) (metricLine, error) {
	var m metricLine
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return m, fmt.Errorf("not a JSON object: %w", err)
	}
	if m.Name == "" {
		return m, fmt.Errorf(`missing "name"`)
	}
	if m.Value == nil {
		return m, fmt.Errorf(`missing numeric "value"`)
	}
	return m, nil
}

// metricSender ships metrics; a line that is not a metric is reported once per line as a warning and skipped.
// Metrics of attempt n are numbered from (n-1)·10¹² so that a requeued run's new metrics never
// collide with the ones its earlier attempt stored.
func metricSender(c *conn, runID string, attempt int, warn func(string)) func(ctx context.Context, lines []tailLine) (int64, error) {
	base := int64(max(attempt, 1)-1) * 1_000_000_000_000
	return func(ctx context.Context, lines []tailLine) (int64, error) {
		var b api.MetricBatch
		for _, l := range lines {
			m, err := parseMetric(l.text)
			if err != nil {
				warn(fmt.Sprintf("metrics file line %d ignored: %v", l.seq, err))
				continue
			}
			t := time.Now().UTC()
			if m.Timestamp != nil {
				t = time.Unix(0, int64(*m.Timestamp*1e9)).UTC()
			}
			b.Metrics = append(b.Metrics, job.Metric{Seq: base + l.seq, Name: m.Name, Value: *m.Value, Step: m.Step, Time: t})
		}
		last := lines[len(lines)-1].seq
		if len(b.Metrics) == 0 {
			return last, nil
		}
		ack, err := retryValue(ctx, c, "ship metrics", func(ctx context.Context) (*api.Ack, error) {
			return c.c.Runs.ShipMetrics(ctx, runID, b)
		})
		if err != nil {
			return 0, err
		}
		if ack.Acked >= b.Metrics[len(b.Metrics)-1].Seq {
			return last, nil
		}
		return max(ack.Acked-base, 0), nil
	}
}
