-- +goose Up
-- Components (issue 15): the shape of models (0011) and data assets (0014): integer versions per
-- name, the rest of the version as JSON in spec (type, inputs, outputs, the command step or the
-- pipeline's steps, its code snapshot). It depends on no migration after 0011.
CREATE TABLE components (
    name       TEXT NOT NULL,
    version    BIGINT NOT NULL,
    spec       TEXT NOT NULL,
    archived   BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (name, version)
);
