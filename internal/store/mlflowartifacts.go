package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MLflowArtifact is a file uploaded to a run through the mlflow-artifacts proxy: Path (relative
// to the run's artifact root, slash-separated, checked by the caller) names the blob Hash.
type MLflowArtifact struct {
	RunID     string
	Path      string
	Hash      string
	Size      int64
	CreatedAt time.Time
}

// ArtifactEntry is one child of an artifact directory: a file with its size, or a directory.
type ArtifactEntry struct {
	Name  string
	IsDir bool
	Size  int64
}

// Key orders entries as their paths sort: a directory d as "d/", so that "d.txt" < "d/" < "d0".
// A listing is in key order, and a page token is the last key.
func (e ArtifactEntry) Key() string {
	if e.IsDir {
		return e.Name + "/"
	}
	return e.Name
}

// ErrPathTaken marks an upload whose path is a directory already, or lies below a file.
var ErrPathTaken = errors.New("path taken")

// PutMLflowArtifact records an uploaded file, replacing what the path named, durably (a power
// loss keeps it). It refuses
// (ErrPathTaken) a path that is a directory of other files or lies below a file: the checks
// and the write are one transaction, so two uploads cannot make a name both a file and a
// directory.
func (s *Tracking) PutMLflowArtifact(ctx context.Context, a MLflowArtifact) error {
	return s.putArtifact(ctx, runArtifacts, a)
}

// artifactTable is a table of uploaded files: a run's (mlflow_artifacts) or a logged model's
// (logged_model_artifacts), keyed by the owner's id in column key.
type artifactTable struct{ table, key, what string }

var (
	runArtifacts   = artifactTable{table: "mlflow_artifacts", key: "run_id", what: "run"}
	modelArtifacts = artifactTable{table: "logged_model_artifacts", key: "model_id", what: "logged model"}
)

// where is the condition on the owner's id.
func (t artifactTable) where() string { return ` FROM ` + t.table + ` WHERE ` + t.key + ` = ?` }

// putArtifact is PutMLflowArtifact on table t (a.RunID is the owner's id).
func (s *Tracking) putArtifact(ctx context.Context, t artifactTable, a MLflowArtifact) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("put artifact %s of %s: %w", a.Path, a.RunID, err)
	}
	defer tx.Rollback()
	if err := checkArtifactPath(ctx, tx, t, a.RunID, a.Path); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO `+t.table+` (`+t.key+`, path, hash, size, created_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (`+t.key+`, path) DO UPDATE SET hash = excluded.hash, size = excluded.size, created_at = excluded.created_at`,
		a.RunID, a.Path, a.Hash, a.Size, nanos(a.CreatedAt))
	if err != nil {
		return fmt.Errorf("put artifact %s of %s: %w", a.Path, a.RunID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("put artifact %s of %s: %w", a.Path, a.RunID, err)
	}
	// The client is told its file is stored, and its blob is synced: so is its name.
	return s.wal.sync()
}

// checkArtifactPath refuses a path below a file, or one that is a directory already.
func checkArtifactPath(ctx context.Context, q querier, t artifactTable, runID, p string) error {
	for i := strings.IndexByte(p, '/'); i >= 0; i = nextSlash(p, i) {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*)`+t.where()+` AND path = ?`,
			runID, p[:i]).Scan(&n); err != nil {
			return fmt.Errorf("put artifact %s of %s: %w", p, runID, err)
		}
		if n > 0 {
			return fmt.Errorf("artifact %s of %s %s: %s is a file: %w", p, t.what, runID, p[:i], ErrPathTaken)
		}
	}
	below, err := firstUnder(ctx, q, t, runID, p+"/", p+"0")
	if err != nil {
		return fmt.Errorf("put artifact %s of %s: %w", p, runID, err)
	}
	if below != "" {
		return fmt.Errorf("artifact %s of %s %s: it is a directory (it holds %s): %w", p, t.what, runID, below, ErrPathTaken)
	}
	return nil
}

func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// firstUnder returns the first path in [from, to), "" when there is none.
func firstUnder(ctx context.Context, q querier, t artifactTable, runID, from, to string) (string, error) {
	var p string
	err := q.QueryRowContext(ctx, `SELECT path`+t.where()+` AND path >= ? AND path < ?
		ORDER BY path LIMIT 1`, runID, from, to).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return p, err
}

// MLflowArtifact returns the uploaded file at a path (ErrNotFound when there is none).
func (s *Tracking) MLflowArtifact(ctx context.Context, runID, p string) (*MLflowArtifact, error) {
	return s.artifact(ctx, runArtifacts, runID, p)
}

func (s *Tracking) artifact(ctx context.Context, t artifactTable, runID, p string) (*MLflowArtifact, error) {
	a := MLflowArtifact{RunID: runID, Path: p}
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT hash, size, created_at`+t.where()+` AND path = ?`,
		runID, p).Scan(&a.Hash, &a.Size, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("artifact %s of %s %s: %w", p, t.what, runID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read artifact %s of %s: %w", p, runID, err)
	}
	a.CreatedAt = fromNanos(at)
	return &a, nil
}

// listBatch is how many rows one step of a listing reads.
const listBatch = 256

// MLflowArtifactChildren returns up to limit children of the directory dir ("" is the root)
// whose keys sort after the key after ("" from the start), in key order. It walks the index
// and skips each subdirectory's contents with one query, so a listing costs its entries, not
// the files below them.
func (s *Tracking) MLflowArtifactChildren(ctx context.Context, runID, dir, after string, limit int) ([]ArtifactEntry, error) {
	return s.artifactChildren(ctx, runArtifacts, runID, dir, after, limit)
}

func (s *Tracking) artifactChildren(ctx context.Context, t artifactTable, runID, dir, after string, limit int) ([]ArtifactEntry, error) {
	prefix, end := "", "" // end "" means no upper bound (the root)
	if dir != "" {
		prefix, end = dir+"/", dir+"0" // '0' follows '/': every path under dir/ sorts before dir0
	}
	cursor := prefix + resumeAfter(after)
	var out []ArtifactEntry
	for len(out) < limit {
		rows, err := s.childRows(ctx, t, runID, cursor, end)
		if err != nil {
			return nil, fmt.Errorf("list artifacts %s of %s: %w", dir, runID, err)
		}
		if len(rows) == 0 {
			break
		}
		for _, r := range rows {
			if r.path < cursor { // inside a directory already listed
				continue
			}
			rest := r.path[len(prefix):]
			e := ArtifactEntry{Name: rest, Size: r.size}
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				e = ArtifactEntry{Name: rest[:i], IsDir: true}
			}
			out = append(out, e)
			cursor = prefix + resumeAfter(e.Key())
			if len(out) == limit {
				break
			}
		}
		if len(rows) < listBatch {
			break // the batch reached the end of the directory
		}
	}
	return out, nil
}

// resumeAfter is the smallest path that follows key and everything below it: after a file
// "f", "f\x01" (paths hold no control characters: the server refuses them; not \x00, which
// PostgreSQL's text cannot hold); after a directory "d/", "d0".
func resumeAfter(key string) string {
	switch {
	case key == "":
		return ""
	case strings.HasSuffix(key, "/"):
		return strings.TrimSuffix(key, "/") + "0"
	}
	return key + "\x01"
}

type pathRow struct {
	path string
	size int64
}

func (s *Tracking) childRows(ctx context.Context, t artifactTable, runID, from, to string) ([]pathRow, error) {
	q := `SELECT path, size` + t.where() + ` AND path >= ? ORDER BY path LIMIT ?`
	args := []any{runID, from, listBatch}
	if to != "" {
		q = `SELECT path, size` + t.where() + ` AND path >= ? AND path < ? ORDER BY path LIMIT ?`
		args = []any{runID, from, to, listBatch}
	}
	return queryAll(ctx, s.db, func(sc scanner) (r pathRow, err error) {
		err = sc.Scan(&r.path, &r.size)
		return r, err
	}, q, args...)
}

// DeleteMLflowArtifacts removes the uploaded file at p, or every file below the directory p
// ("" removes all of the run's), and returns how many it removed.
func (s *Tracking) DeleteMLflowArtifacts(ctx context.Context, runID, p string) (int64, error) {
	return s.deleteArtifacts(ctx, runArtifacts, runID, p)
}

func (s *Tracking) deleteArtifacts(ctx context.Context, t artifactTable, runID, p string) (int64, error) {
	var res sql.Result
	var err error
	if p == "" {
		res, err = s.db.ExecContext(ctx, `DELETE`+t.where(), runID)
	} else {
		res, err = s.db.ExecContext(ctx, `DELETE`+t.where()+` AND (path = ? OR (path >= ? AND path < ?))`,
			runID, p, p+"/", p+"0")
	}
	if err != nil {
		return 0, fmt.Errorf("delete artifacts %s of %s: %w", p, runID, err)
	}
	return res.RowsAffected()
}

// ErrTooMany is a list longer than its caller can take whole.
var ErrTooMany = errors.New("too many to list at once")

// MLflowArtifactFiles returns a run's uploaded files in path order, at most limit of them; more
// is ErrTooMany, so that a caller never silently gets part of a run's files.
func (s *Tracking) MLflowArtifactFiles(ctx context.Context, runID string, limit int) ([]MLflowArtifact, error) {
	return s.artifactFiles(ctx, runArtifacts, runID, limit)
}

func (s *Tracking) artifactFiles(ctx context.Context, t artifactTable, runID string, limit int) ([]MLflowArtifact, error) {
	out, err := queryAll(ctx, s.db, func(sc scanner) (a MLflowArtifact, err error) {
		var at int64
		err = sc.Scan(&a.RunID, &a.Path, &a.Hash, &a.Size, &at)
		a.CreatedAt = fromNanos(at)
		return a, err
	}, `SELECT `+t.key+`, path, hash, size, created_at`+t.where()+` ORDER BY path LIMIT ?`, runID, limit+1)
	if err != nil {
		return nil, fmt.Errorf("list artifacts of %s: %w", runID, err)
	}
	if len(out) > limit {
		return nil, fmt.Errorf("%s %s has more than %d uploaded artifacts: %w", t.what, runID, limit, ErrTooMany)
	}
	return out, nil
}
