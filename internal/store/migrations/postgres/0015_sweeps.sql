-- +goose Up
-- Sweep jobs (issue 16): a sweep is a parent run, never handed to a backend; its trials are
-- ordinary command runs. A trial's row is written in the transaction that creates its run and
-- (parent, idx) is its key, so a trial is never created twice, across a restart too. No foreign
-- keys: deleting an ended trial's run leaves its row, so the sweep's trial count never shrinks.
CREATE TABLE sweep_trials (
    parent   TEXT NOT NULL,
    idx      BIGINT NOT NULL,
    run_id   TEXT NOT NULL UNIQUE,
    params   TEXT NOT NULL,
    stopped  TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (parent, idx)
);
-- A sweep's outcome so far: its best trial (Azure's best_child_run_id) and why it ended.
CREATE TABLE sweeps (
    run_id      TEXT PRIMARY KEY,
    best_run_id TEXT NOT NULL DEFAULT '',
    best_index  BIGINT NOT NULL DEFAULT -1,
    best_params TEXT NOT NULL DEFAULT '{}',
    best_metric DOUBLE PRECISION,
    done_reason TEXT NOT NULL DEFAULT ''
);
