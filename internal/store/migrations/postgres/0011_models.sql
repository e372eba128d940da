-- +goose Up
-- Registered models (design 0014): integer versions per name, so that "the next version" and
-- "@latest" (the highest version not archived) are one query. spec holds the rest of the
-- version as JSON (type, manifest, source, description, tags, properties, stage, files, size).
CREATE TABLE models (
    name       TEXT NOT NULL,
    version    BIGINT NOT NULL,
    spec       TEXT NOT NULL,
    archived   BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (name, version)
);
