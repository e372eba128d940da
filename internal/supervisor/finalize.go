package supervisor

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/transfer"
)

// finalize uploads the outputs in object stores (when the command completed), ships the
// remaining log lines and metrics, then collects and uploads the artifacts (outputs/, logs/,
// user_logs/, system_logs/) and named outputs. Everything is retried while the
// server is away, so a run's outputs are not lost to a server restart. Every node of a
// multi-node run does this for its own files (see collect); node 0 then waits until the run's
// artifacts hold every node's part, so that its end report still means the logs are complete.
func (s *outputCollector) finalize(ctx context.Context, w *workspace, p *pipeline, completed bool) error {
	s.report(job.Finalizing, "collecting outputs and logs")
	ctx = context.WithoutCancel(ctx)
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	keep(s.uploadStores(ctx, w, completed)) // objectdata.go: first, so the system log says how it went
	keep(p.logs.shipAll(ctx, true))
	keep(s.logLost(p))
	if !s.worker() { // node 0's processes log the run's metrics
		keep(p.metrics.shipAll(ctx, true))
	}
	report, files, manifests, err := s.collect(ctx, w)
	if err != nil {
		s.noteDiskFull(err)
		return cmp.Or(firstErr, fmt.Errorf("collect outputs: %w", err))
	}
	if err := s.upload(ctx, files, manifests); err != nil {
		return err
	}
	keep(s.register(ctx, report))
	return firstErr
}

// upload sends the collected files, then the manifests that name them (see
// transfer.UploadTree), retrying while the server is away.
func (s *outputCollector) upload(ctx context.Context, files, manifests []transfer.Item) error {
	err := s.conn.retry(ctx, "upload outputs", func(ctx context.Context) error {
		if _, err := transfer.Upload(ctx, s.conn.c, files, nil); err != nil {
			return err
		}
		_, err := transfer.Upload(ctx, s.conn.c, manifests, nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("upload outputs: %w", err)
	}
	return nil
}

// nodeWaitPoll bounds how often node 0 asks whether the other nodes' parts are in: soon at
// first (they usually finish together), then every nodeWaitPoll.max.
var nodeWaitPoll = struct{ first, max time.Duration }{100 * time.Millisecond, 2 * time.Second}

// register registers this node's part of the run's artifacts. Node 0 then sends it again (the
// server takes the same part any number of times) until the server says the run's artifacts
// hold every node's part, or that it stopped waiting for the missing ones (NodeOutputsWait on
// the server bounds the wait, and the run carries a warning).
func (s *outputCollector) register(ctx context.Context, report api.ArtifactsReport) error {
	report.Node = s.spec.NodeRank
	poll := nodeWaitPoll.first
	var waited []int
	for {
		reply, err := retryValue(ctx, s.conn, "register outputs", func(ctx context.Context) (*api.ArtifactsReply, error) {
			return s.conn.c.Runs.ReportArtifacts(ctx, s.cfg.RunID, report)
		})
		if err != nil || s.worker() || len(reply.WaitingFor) == 0 {
			return err
		}
		if !slices.Equal(waited, reply.WaitingFor) {
			s.log.Info("waiting for the logs and outputs of the other nodes", "nodes", reply.WaitingFor)
			waited = reply.WaitingFor
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		poll = min(2*poll, nodeWaitPoll.max)
	}
}

// collect builds this node's artifact manifest and named outputs' manifests, with the blobs to
// upload. On a multi-node run every node collects its own files, laid out as they appear in
// the run's artifacts: node 0's as on a single node; another node's per-rank logs keep their
// names (std_log_process_<global rank>.txt), its merged log becomes std_log_node_<n>.txt and its
// system logs go under system_logs/node_<n>/. Where two nodes wrote the same path in outputs/ or
// logs/ (or a named output) differently, node 0's file is kept (the lowest node wins; the run
// says which paths).
func (s *outputCollector) collect(ctx context.Context, w *workspace) (rep api.ArtifactsReport, items, manifests []transfer.Item, err error) {
	art := &snapshot.Manifest{}
	for _, p := range s.artifactDirs(w) {
		m, err := s.fromDir(ctx, p.dir)
		if err != nil {
			return rep, nil, nil, fmt.Errorf("%s: %w", p.prefix, err)
		}
		if p.rename != nil {
			for i := range m.Entries {
				m.Entries[i].Path = p.rename(m.Entries[i].Path)
			}
		}
		addPrefixed(art, m, p.prefix)
		items = append(items, s.fileItems(m)...)
		// Checked as each folder joins, so that the warnings of outputs/ and logs/ are in the
		// system log collected after them.
		art = s.keepInside(art, "")
	}
	h, it, err := s.putManifest(art)
	if err != nil {
		return rep, nil, nil, err
	}
	rep.Artifacts = h
	manifests = append(manifests, it)
	rep.NamedOutputs = map[string]string{}
	for name, dir := range w.outputDirs {
		if s.isStoreOutput(name) { // written to its object store (objectdata.go), not to the workspace
			continue
		}
		m, err := s.fromDir(ctx, dir)
		if err != nil {
			return rep, nil, nil, fmt.Errorf("output %s: %w", name, err)
		}
		m = s.keepInside(m, name)
		h, it, err := s.putManifest(m)
		if err != nil {
			return rep, nil, nil, err
		}
		rep.NamedOutputs[name] = h
		items = append(items, s.fileItems(m)...)
		manifests = append(manifests, it)
	}
	return rep, items, manifests, nil
}

func (s *outputCollector) fromDir(ctx context.Context, dir string) (*snapshot.Manifest, error) {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return &snapshot.Manifest{}, nil
	}
	return snapshot.FromDir(ctx, dir, s.cache)
}

func (s *outputCollector) putManifest(m *snapshot.Manifest) (string, transfer.Item, error) {
	b, h, err := m.Encode()
	if err != nil {
		return "", transfer.Item{}, err
	}
	if _, err := s.cache.PutBytes(b); err != nil {
		return "", transfer.Item{}, err
	}
	return h, transfer.BytesItem(h, b), nil
}

func (s *outputCollector) fileItems(m *snapshot.Manifest) []transfer.Item {
	var out []transfer.Item
	for _, e := range m.Files() {
		out = append(out, transfer.FileItem(e.Hash, e.Size, s.cache.Path(e.Hash)))
	}
	return out
}

// artifactDir is a folder collected into the artifacts under prefix, its paths renamed.
type artifactDir struct {
	prefix, dir string
	rename      func(path string) string
}

// artifactDirs are this node's folders that make its part of the artifacts (see collect).
func (s *outputCollector) artifactDirs(w *workspace) []artifactDir {
	dirs := []artifactDir{
		{"outputs", filepath.Join(w.dir, "outputs"), nil},
		{"logs", filepath.Join(w.dir, "logs"), nil},
		{UserLogsDir, filepath.Join(s.cfg.Dir, UserLogsDir), nil},
		{SystemLogsDir, filepath.Join(s.cfg.Dir, SystemLogsDir), nil},
	}
	if s.worker() {
		node := s.spec.NodeRank
		dirs[2].rename = func(p string) string {
			if p == StdLogFile {
				return NodeLogFile(node)
			}
			return p
		}
		dirs[3].prefix = fmt.Sprintf("%s/node_%d", SystemLogsDir, node)
	}
	return dirs
}

// NodeLogFile names the merged log of node n > 0 of a multi-node run, in user_logs/ and among
// the run's log files.
func NodeLogFile(node int) string { return fmt.Sprintf("std_log_node_%d.txt", node) }

// addPrefixed adds m's entries to dst under prefix/ (and the folders of prefix).
func addPrefixed(dst, m *snapshot.Manifest, prefix string) {
	for d := prefix; d != "."; d = path.Dir(d) {
		if !slices.ContainsFunc(dst.Entries, func(e snapshot.Entry) bool { return e.Path == d }) {
			dst.Entries = append(dst.Entries, snapshot.Entry{Path: d, Type: snapshot.TypeDir, Mode: 0o755})
		}
	}
	for _, e := range m.Entries {
		e.Path = prefix + "/" + e.Path
		dst.Entries = append(dst.Entries, e)
	}
}
