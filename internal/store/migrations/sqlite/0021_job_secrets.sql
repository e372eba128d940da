-- +goose Up
-- Workspace secrets for jobs (issue 18, docs/secrets.md). value is sealed with the workspace key
-- (never the plaintext); no API route returns it. last_used_run and last_used_at record the
-- run whose supervisor fetched it last (what `secret list` shows as its use).
CREATE TABLE job_secrets (
    name          TEXT PRIMARY KEY,
    value         TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    last_used_run TEXT NOT NULL DEFAULT '',
    last_used_at  INTEGER NOT NULL DEFAULT 0
);
