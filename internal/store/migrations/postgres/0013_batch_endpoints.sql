-- +goose Up
-- Batch endpoints and their deployments (issue 14): definitions only. Invoking one queues a
-- parallel job (a run tagged with the endpoint and deployment), so they hold no runs of their own.
CREATE TABLE batch_endpoints (
    name        TEXT PRIMARY KEY,
    spec        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE TABLE batch_deployments (
    endpoint    TEXT NOT NULL REFERENCES batch_endpoints (name) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    spec        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (endpoint, name)
);
