-- +goose Up
-- Online endpoints and their deployments (design 0014). An endpoint's keys are kept sealed (the
-- workspace's secret box, as compute secrets are): get-credentials shows them, nothing else.
CREATE TABLE endpoints (
    name        TEXT PRIMARY KEY,
    spec        TEXT NOT NULL,
    keys        TEXT NOT NULL DEFAULT '',
    state       TEXT NOT NULL DEFAULT 'Succeeded',
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE TABLE deployments (
    endpoint    TEXT NOT NULL REFERENCES endpoints (name) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    spec        TEXT NOT NULL,
    -- generation counts the deployment's updates: replicas of an older one are replaced.
    generation  BIGINT NOT NULL DEFAULT 1,
    -- state: Creating, Updating, Succeeded, Failed, Deleting (Azure's provisioning states), and why.
    state       TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    -- the last replica run that ended on its own (get-logs shows it when none is running)
    last_failed TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (endpoint, name)
);
-- A replica is a run (design 0014): which deployment it serves, the spec generation it runs, and
-- where it answers once its supervisor reported the address.
CREATE TABLE replicas (
    run_id      TEXT PRIMARY KEY,
    endpoint    TEXT NOT NULL,
    deployment  TEXT NOT NULL,
    generation  BIGINT NOT NULL,
    address     TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL
);
CREATE INDEX replicas_deployment ON replicas (endpoint, deployment);
