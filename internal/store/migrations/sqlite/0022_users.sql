-- +goose Up
-- Users, their personal API tokens and the audit log (issue 18, docs/users.md). A workspace
-- server is one workspace, so a user's role is the role in this workspace. "admin" is the
-- bootstrap owner: the workspace token ($HANGAR_HOME/token) acts as it.
CREATE TABLE users (
    name       TEXT PRIMARY KEY,
    role       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
INSERT INTO users (name, role, created_at) VALUES ('admin', 'owner', CAST(strftime('%s', 'now') AS INTEGER) * 1000000000);

-- hash is the SHA-256 of the token (hex): the token itself is shown once and never stored.
CREATE TABLE user_tokens (
    user_name    TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    revoked_at   INTEGER NOT NULL DEFAULT 0,
    last_used_at INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_name, name)
);

CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    user_name TEXT NOT NULL,
    action    TEXT NOT NULL,
    object    TEXT NOT NULL,
    detail    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at);
