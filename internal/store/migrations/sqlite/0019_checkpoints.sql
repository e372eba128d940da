-- +goose Up
-- The latest good checkpoint of each run (issue 17, docs/checkpoints.md): the manifest of the
-- files its supervisor saved from HANGAR_CHECKPOINT_DIR, committed only once every file and the
-- manifest are in the blob store, so a half-uploaded checkpoint never replaces a good one. A
-- requeued attempt restores it before its command starts.
CREATE TABLE run_checkpoints (
    run_id       TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    attempt      INTEGER NOT NULL,
    manifest     TEXT NOT NULL,
    files        INTEGER NOT NULL,
    bytes        INTEGER NOT NULL,
    saved_at     INTEGER NOT NULL, -- when the supervisor read the folder
    committed_at INTEGER NOT NULL
);

-- What a preemption cost, filled when the run is requeued: when the lost attempt started its
-- command (NULL: it never did) and the saved checkpoint the next attempt resumes from (NULL:
-- none, it starts from scratch). The work lost is from the later of the two to the preemption.
ALTER TABLE run_preemptions ADD COLUMN started_at INTEGER;
ALTER TABLE run_preemptions ADD COLUMN checkpoint_at INTEGER;
