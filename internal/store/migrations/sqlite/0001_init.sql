-- +goose Up
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE computes (
    name        TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    properties  TEXT NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL
);

CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    display_name    TEXT NOT NULL DEFAULT '',
    experiment_name TEXT NOT NULL DEFAULT '',
    description     TEXT NOT NULL DEFAULT '',
    tags            TEXT NOT NULL DEFAULT '{}',
    compute         TEXT NOT NULL,
    status          TEXT NOT NULL,
    status_reason   TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    started_at      INTEGER,
    ended_at        INTEGER,
    exit_code       INTEGER,
    warnings        TEXT NOT NULL DEFAULT '[]',
    spec            TEXT NOT NULL,
    handle          TEXT,
    token_hash      TEXT NOT NULL DEFAULT '',
    last_heartbeat  INTEGER,
    cancel_sent     INTEGER NOT NULL DEFAULT 0,
    artifacts       TEXT NOT NULL DEFAULT '',
    named_outputs   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX runs_status ON runs (status);
CREATE INDEX runs_created ON runs (created_at);

CREATE TABLE run_events (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    time        INTEGER NOT NULL,
    from_status TEXT NOT NULL,
    to_status   TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE log_lines (
    run_id TEXT NOT NULL,
    file   TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    time   INTEGER NOT NULL,
    text   TEXT NOT NULL,
    PRIMARY KEY (run_id, file, seq)
) WITHOUT ROWID;

CREATE TABLE metrics (
    run_id TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    name   TEXT NOT NULL,
    value  REAL NOT NULL,
    step   INTEGER NOT NULL,
    time   INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE INDEX metrics_name ON metrics (run_id, name, seq);
