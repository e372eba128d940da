-- +goose Up
-- MLflow's registry webhooks (docs/mlflow.md "Webhooks"). secret is sealed with the workspace
-- key ('' none) and resealed with the job secrets when the key rotates; events is a JSON array
-- of MLflow's event names ("model_version.created").
CREATE TABLE registry_webhooks (
    id          TEXT NOT NULL PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,
    secret      TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
-- The outbox: each registry write appends its event in its own transaction, with one delivery
-- per active webhook subscribed to it; the webhook loop sends the due deliveries and records
-- every attempt's outcome (state: pending, delivered, failed).
CREATE TABLE registry_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    event      TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE webhook_deliveries (
    id              TEXT NOT NULL PRIMARY KEY,
    webhook_id      TEXT NOT NULL REFERENCES registry_webhooks (id) ON DELETE CASCADE,
    event_seq       INTEGER NOT NULL REFERENCES registry_events (seq),
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_status     INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    updated_at      INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);
