-- +goose Up
-- Workspace connections (docs/data.md "Connections and data import"): the external sources
-- data imports read. spec is the connection as shown (type, target, description, tags, the
-- credentials' type); credentials is their values, sealed with the workspace key and resealed
-- with the job secrets when the key rotates.
CREATE TABLE connections (
    name        TEXT NOT NULL PRIMARY KEY,
    spec        TEXT NOT NULL,
    credentials TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

