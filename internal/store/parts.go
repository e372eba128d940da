package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// RunPart is one node's part of a run attempt: the manifests its supervisor collected, and a
// non-leading node's failure.
type RunPart struct {
	RunID   string
	Attempt int
	Node    int
	// Artifacts is the node's artifacts manifest ("" until it registered one); NamedOutputs maps
	// an output name to the manifest of what the node wrote there.
	Artifacts    string
	NamedOutputs map[string]string
	RegisteredAt time.Time
	// Failure says why the node failed ("" when it did not), with its exit code.
	Failure  string
	ExitCode *int
	FailedAt time.Time
}

// Registered reports whether the node registered its manifests.
func (p *RunPart) Registered() bool { return p.Artifacts != "" }

// ErrStale means a conditional write found the data it depends on changed; nothing was written.
var ErrStale = errors.New("changed meanwhile")

const partColumns = `run_id, attempt, node_rank, artifacts, named_outputs, registered_at, failure, exit_code, failed_at`

// RegisterRunPart stores a node's manifests unless it registered some already or the run's
// artifacts were assembled (checked in the same statement, so a part is either in the assembly
// or refused), and returns the part as stored (unregistered when refused): a part never
// changes, so the caller compares it with what it asked for.
func (s *Runs) RegisterRunPart(ctx context.Context, p RunPart) (*RunPart, error) {
	named, err := json.Marshal(nonNilMap(p.NamedOutputs))
	if err != nil {
		return nil, fmt.Errorf("register part of %s: %w", p.RunID, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO run_parts (run_id, attempt, node_rank, artifacts, named_outputs, registered_at)
		SELECT ?, ?, ?, ?, ?, ? WHERE (SELECT artifacts FROM runs WHERE id = ?) = ''
		ON CONFLICT (run_id, attempt, node_rank) DO UPDATE
		SET artifacts = excluded.artifacts, named_outputs = excluded.named_outputs, registered_at = excluded.registered_at
		WHERE run_parts.artifacts = ''`,
		p.RunID, p.Attempt, p.Node, p.Artifacts, string(named), nanos(p.RegisteredAt), p.RunID)
	if err != nil {
		return nil, fmt.Errorf("register part %d of %s: %w", p.Node, p.RunID, err)
	}
	got, err := getPart(ctx, s.db, p.RunID, p.Attempt, p.Node)
	if errors.Is(err, ErrNotFound) {
		return &RunPart{RunID: p.RunID, Attempt: p.Attempt, Node: p.Node}, nil
	}
	return got, err
}

// RecordNodeFailure records why a node of a run attempt failed; the first failure recorded stays.
func (s *Runs) RecordNodeFailure(ctx context.Context, runID string, attempt, node int, reason string, exit *int, at time.Time) error {
	var code any
	if exit != nil {
		code = *exit
	}
	return execStmt(ctx, s.db, fmt.Sprintf("record failure of node %d of %s", node, runID),
		`INSERT INTO run_parts (run_id, attempt, node_rank, failure, exit_code, failed_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, attempt, node_rank) DO UPDATE
		SET failure = excluded.failure, exit_code = excluded.exit_code, failed_at = excluded.failed_at
		WHERE run_parts.failure = ''`,
		runID, attempt, node, reason, code, nanos(at))
}

// RunParts returns the parts of a run attempt, by node rank.
func (s *Runs) RunParts(ctx context.Context, runID string, attempt int) ([]RunPart, error) {
	return listParts(ctx, s.db, runID, attempt)
}

// SetRunArtifacts records a run's assembled artifacts, once, and adds warnings to the run. It
// writes nothing and returns ErrStale when the run has artifacts already or when the nodes with
// registered parts in its attempt are no longer exactly `from` (a part arrived meanwhile).
func (s *RunWrites) SetRunArtifacts(ctx context.Context, runID string, from []int, artifacts string, named map[string]string, warnings []string) (*job.Run, error) {
	return s.updateRun(ctx, runID, func(q querier, r *job.Run) ([]job.Event, error) {
		if r.ArtifactsHash != "" {
			return nil, fmt.Errorf("artifacts of %s: already set: %w", runID, ErrStale)
		}
		parts, err := listParts(ctx, q, runID, max(r.Attempt, 1))
		if err != nil {
			return nil, err
		}
		var have []int
		for _, p := range parts {
			if p.Registered() {
				have = append(have, p.Node)
			}
		}
		if !slices.Equal(have, from) {
			return nil, fmt.Errorf("artifacts of %s: parts of nodes %v registered, assembled from %v: %w", runID, have, from, ErrStale)
		}
		r.ArtifactsHash, r.NamedOutputs = artifacts, named
		for _, w := range warnings {
			if !slices.Contains(r.Warnings, w) {
				r.Warnings = append(r.Warnings, w)
			}
		}
		return nil, nil
	})
}

func getPart(ctx context.Context, q querier, runID string, attempt, node int) (*RunPart, error) {
	row := q.QueryRowContext(ctx, `SELECT `+partColumns+` FROM run_parts WHERE run_id = ? AND attempt = ? AND node_rank = ?`,
		runID, attempt, node)
	return getOne(row, scanPart, "part", fmt.Sprintf("%d of %s", node, runID))
}

func listParts(ctx context.Context, q querier, runID string, attempt int) ([]RunPart, error) {
	out, err := queryAll(ctx, q, values(scanPart), `SELECT `+partColumns+` FROM run_parts WHERE run_id = ? AND attempt = ? ORDER BY node_rank`,
		runID, attempt)
	if err != nil {
		return nil, fmt.Errorf("read parts of %s: %w", runID, err)
	}
	return out, nil
}

func scanPart(sc scanner) (*RunPart, error) {
	var p RunPart
	var named string
	var registered, exit, failed sql.NullInt64
	if err := sc.Scan(&p.RunID, &p.Attempt, &p.Node, &p.Artifacts, &named, &registered, &p.Failure, &exit, &failed); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(named), &p.NamedOutputs); err != nil {
		return nil, fmt.Errorf("decode part %d of %s: %w", p.Node, p.RunID, err)
	}
	if t := optTime(registered); t != nil {
		p.RegisteredAt = *t
	}
	if t := optTime(failed); t != nil {
		p.FailedAt = *t
	}
	if exit.Valid {
		c := int(exit.Int64)
		p.ExitCode = &c
	}
	return &p, nil
}
