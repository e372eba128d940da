-- +goose Up
-- Files uploaded through the mlflow-artifacts proxy: a run's path (relative to its artifact root,
-- slash-separated, validated by the server) names a content-addressed blob. A re-upload replaces
-- the row; the blob stays (blobs are shared and never rewritten). The primary key orders a run's
-- paths bytewise, which is what a directory listing walks.
CREATE TABLE mlflow_artifacts (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    path       TEXT COLLATE "C" NOT NULL, -- bytewise, as SQLite orders it, whatever the database's locale
    hash       TEXT NOT NULL,
    size       BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, path)
);
