-- +goose Up
CREATE TABLE environments (
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    spec       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE INDEX environments_latest ON environments (name, seq);

ALTER TABLE runs ADD COLUMN timings TEXT NOT NULL DEFAULT '{}';
