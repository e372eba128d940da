package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/transfer"
)

// finalize ships the remaining log lines and metrics, then collects and uploads the artifacts
// (outputs/, logs/, user_logs/, system_logs/) and named outputs. Everything is retried while the
// server is away, so a run's outputs are not lost to a server restart.
func (s *Supervisor) finalize(ctx context.Context, w *workspace, p *pipeline) error {
	s.report(job.Finalizing, "collecting outputs and logs")
	ctx = context.WithoutCancel(ctx)
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	keep(p.logs.shipAll(ctx, true))
	if s.worker() {
		return firstErr // node 0 collects the run's outputs
	}
	keep(p.metrics.shipAll(ctx, true))
	report, files, manifests, err := s.collect(ctx, w)
	if err != nil {
		return fmt.Errorf("collect outputs: %w", err)
	}
	// Files before the manifests that name them (see transfer.UploadTree).
	err = s.conn.retry(ctx, "upload outputs", func(ctx context.Context) error {
		if _, err := transfer.Upload(ctx, s.conn.c, files, nil); err != nil {
			return err
		}
		_, err := transfer.Upload(ctx, s.conn.c, manifests, nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("upload outputs: %w", err)
	}
	keep(s.conn.retry(ctx, "register outputs", func(ctx context.Context) error {
		return s.conn.c.ReportArtifacts(ctx, s.cfg.RunID, report)
	}))
	return firstErr
}

// collect builds the artifact manifest and the named outputs' manifests, with the blobs to upload.
func (s *Supervisor) collect(ctx context.Context, w *workspace) (rep api.ArtifactsReport, items, manifests []transfer.Item, err error) {
	art := &snapshot.Manifest{}
	parts := []struct{ prefix, dir string }{
		{"outputs", filepath.Join(w.dir, "outputs")},
		{"logs", filepath.Join(w.dir, "logs")},
		{UserLogsDir, filepath.Join(s.cfg.Dir, UserLogsDir)},
		{SystemLogsDir, filepath.Join(s.cfg.Dir, SystemLogsDir)},
	}
	for _, p := range parts {
		m, err := s.fromDir(ctx, p.dir)
		if err != nil {
			return rep, nil, nil, fmt.Errorf("%s: %w", p.prefix, err)
		}
		addPrefixed(art, m, p.prefix)
		items = append(items, s.fileItems(m)...)
	}
	h, it, err := s.putManifest(art)
	if err != nil {
		return rep, nil, nil, err
	}
	rep.Artifacts = h
	manifests = append(manifests, it)
	rep.NamedOutputs = map[string]string{}
	for name, dir := range w.outputDirs {
		m, err := s.fromDir(ctx, dir)
		if err != nil {
			return rep, nil, nil, fmt.Errorf("output %s: %w", name, err)
		}
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

func (s *Supervisor) fromDir(ctx context.Context, dir string) (*snapshot.Manifest, error) {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return &snapshot.Manifest{}, nil
	}
	return snapshot.FromDir(ctx, dir, s.cache)
}

func (s *Supervisor) putManifest(m *snapshot.Manifest) (string, transfer.Item, error) {
	b, h, err := m.Encode()
	if err != nil {
		return "", transfer.Item{}, err
	}
	if _, err := s.cache.PutBytes(b); err != nil {
		return "", transfer.Item{}, err
	}
	return h, transfer.BytesItem(h, b), nil
}

func (s *Supervisor) fileItems(m *snapshot.Manifest) []transfer.Item {
	var out []transfer.Item
	for _, e := range m.Files() {
		out = append(out, transfer.FileItem(e.Hash, e.Size, s.cache.Path(e.Hash)))
	}
	return out
}

// addPrefixed adds m's entries to dst under prefix/.
func addPrefixed(dst, m *snapshot.Manifest, prefix string) {
	dst.Entries = append(dst.Entries, snapshot.Entry{Path: prefix, Type: snapshot.TypeDir, Mode: 0o755})
	for _, e := range m.Entries {
		e.Path = prefix + "/" + e.Path
		dst.Entries = append(dst.Entries, e)
	}
}
