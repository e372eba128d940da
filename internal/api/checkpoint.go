package api

import (
	"context"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// A node's shutdown notice, from its agent to the supervisors it started (docs/checkpoints.md).
const (
	// NoticeSignal asks a supervisor to save its run's checkpoint now.
	NoticeSignal = syscall.SIGUSR1
	// NoticeReadyFile, in a run directory's hangar/ folder, says its supervisor takes
	// NoticeSignal: an agent signals no supervisor without it (the signal would end a process
	// that does not take it).
	NoticeReadyFile = "notice-ready"
	// NoticeAckFile, in the same folder, holds the time (RFC 3339) the supervisor was last
	// done with a notice (its save over, or nothing to save).
	NoticeAckFile = "notice-ack"
)

// CheckpointCommit is a supervisor's save of its run's HANGAR_CHECKPOINT_DIR (POST
// /api/runs/{id}/checkpoint), sent once the manifest and every file it names are uploaded: the
// server checks that they are stored before it makes it the run's latest checkpoint.
type CheckpointCommit struct {
	Attempt  int    `json:"attempt"`
	Manifest string `json:"manifest"`
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
	// SavedAt is when the folder was read: the point the next attempt resumes from.
	SavedAt time.Time `json:"saved_at"`
	// Why is what made the supervisor save: "periodic", "notice" (the node's shutdown notice)
	// or "end" (an attempt ending without completing).
	Why string `json:"why,omitempty"`
}

// CheckpointRef is a run's latest good checkpoint: in a run spec (the supervisor restores it
// into HANGAR_CHECKPOINT_DIR before the command starts) and in job show.
type CheckpointRef struct {
	Attempt  int       `json:"attempt"`
	Manifest string    `json:"manifest"`
	Files    int       `json:"files"`
	Bytes    int64     `json:"bytes"`
	SavedAt  time.Time `json:"saved_at"`
}

// Preemption is what one preemption cost a run (job show, the run detail).
type Preemption struct {
	Attempt int       `json:"attempt"`
	Node    string    `json:"node"`
	At      time.Time `json:"at"`
	// LostSeconds is the work lost: from the checkpoint the next attempt resumed from (or the
	// attempt's start, when it saved none) to the preemption.
	LostSeconds float64 `json:"lost_seconds"`
	// WaitSeconds is how long the run then waited to start again (nil: it has not yet).
	WaitSeconds *float64 `json:"wait_seconds,omitempty"`
	// ResumedFrom is the checkpoint the next attempt restored (nil: it started from scratch).
	ResumedFrom *time.Time `json:"resumed_from,omitempty"`
}

// CommitCheckpoint makes an uploaded checkpoint the run's latest.
func (c *RunClient) CommitCheckpoint(ctx context.Context, runID string, cp CheckpointCommit) error {
	return c.client.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/checkpoint", cp, nil)
}
