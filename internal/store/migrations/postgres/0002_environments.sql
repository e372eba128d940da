-- +goose Up
CREATE TABLE environments (
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    spec       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE INDEX environments_latest ON environments (name, seq);

ALTER TABLE runs ADD COLUMN timings TEXT NOT NULL DEFAULT '{}';
