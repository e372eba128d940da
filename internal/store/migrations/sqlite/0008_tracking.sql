-- +goose Up
-- MLflow tracking (docs/mlflow.md): experiments, runs that are not jobs, params, tags, dataset
-- inputs, and one metric history for what supervisors read from $HANGAR_METRICS_FILE and what
-- MLflow clients log.

CREATE TABLE experiments (
    id                INTEGER PRIMARY KEY,
    name              TEXT NOT NULL UNIQUE,
    artifact_location TEXT NOT NULL DEFAULT '',
    lifecycle_stage   TEXT NOT NULL DEFAULT 'active',
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);
-- MLflow's experiment 0 is "Default": runs without an experiment (a job without
-- experiment_name) belong to it.
INSERT INTO experiments (id, name, created_at, updated_at) VALUES (0, 'Default', 0, 0);
INSERT INTO experiments (name, created_at, updated_at)
    SELECT DISTINCT experiment_name, 0, 0 FROM runs WHERE experiment_name NOT IN ('', 'Default');

CREATE TABLE experiment_tags (
    experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    value         TEXT NOT NULL,
    PRIMARY KEY (experiment_id, key)
) WITHOUT ROWID;

-- is_job = 0: a run created through the MLflow API (a notebook, a laptop). The controller reads
-- jobs only (store.RunFilter.Active), so no backend ever sees such a run.
ALTER TABLE runs ADD COLUMN is_job INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN experiment_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN lifecycle_stage TEXT NOT NULL DEFAULT 'active';
UPDATE runs SET experiment_id = COALESCE(
    (SELECT e.id FROM experiments e WHERE e.name = runs.experiment_name), 0);
CREATE INDEX runs_experiment ON runs (experiment_id, created_at);

DROP INDEX runs_active;
CREATE INDEX runs_active ON runs (created_at, id)
    WHERE status NOT IN ('Completed', 'Failed', 'Canceled') AND is_job = 1;

CREATE TABLE run_params (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE TABLE run_tags (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
INSERT INTO run_tags (run_id, key, value)
    SELECT runs.id, j.key, CAST(j.value AS TEXT) FROM runs, json_each(runs.tags) j;

-- A run's dataset inputs (log-inputs): the dataset and its input tags as MLflow's JSON.
CREATE TABLE run_inputs (
    run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    digest  TEXT NOT NULL,
    dataset TEXT NOT NULL,
    tags    TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (run_id, name, digest)
) WITHOUT ROWID;

-- One metric history with two writers: src 0 is the run's metrics file (seq = its line, so a
-- supervisor's resend is idempotent), src 1 the MLflow API (seq counts its points).
CREATE TABLE metrics_new (
    run_id TEXT NOT NULL,
    src    INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    name   TEXT NOT NULL,
    value  REAL NOT NULL,
    step   INTEGER NOT NULL,
    time   INTEGER NOT NULL,
    PRIMARY KEY (run_id, src, seq)
) WITHOUT ROWID;
INSERT INTO metrics_new (run_id, src, seq, name, value, step, time)
    SELECT run_id, 0, seq, name, value, step, time FROM metrics;
DROP TABLE metrics;
ALTER TABLE metrics_new RENAME TO metrics;
CREATE INDEX metrics_name ON metrics (run_id, name, step, time);

-- Each metric's latest point by MLflow's rule (highest step, then timestamp, then value): what
-- runs/get returns and what search filters and orders by, without reading the history.
CREATE TABLE latest_metrics (
    run_id TEXT NOT NULL,
    name   TEXT NOT NULL,
    value  REAL NOT NULL,
    step   INTEGER NOT NULL,
    time   INTEGER NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
CREATE INDEX latest_metrics_value ON latest_metrics (name, value);
INSERT INTO latest_metrics (run_id, name, value, step, time)
    SELECT run_id, name, value, step, time FROM (
        SELECT run_id, name, value, step, time, ROW_NUMBER() OVER (
            PARTITION BY run_id, name ORDER BY step DESC, time DESC, seq DESC) AS k
        FROM metrics) WHERE k = 1;
