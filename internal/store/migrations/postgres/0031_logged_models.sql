-- +goose Up
-- MLflow 3's logged models (docs/mlflow.md "Logged models"), kept with the run that produced
-- them: a run's deletion takes its models, their params, tags, metrics and files with it.
-- status is MLflow's LoggedModelStatus number (1 pending, 2 ready, 3 upload failed); a deleted
-- model keeps its row (deleted_at) as MLflow's soft delete does. Timestamps are nanoseconds.
CREATE TABLE logged_models (
    id             TEXT PRIMARY KEY,
    experiment_id  BIGINT NOT NULL REFERENCES experiments (id),
    run_id         TEXT REFERENCES runs (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    model_type     TEXT NOT NULL DEFAULT '',
    status         BIGINT NOT NULL,
    status_message TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    deleted_at     BIGINT
);
CREATE INDEX logged_models_experiment ON logged_models (experiment_id, created_at);
CREATE INDEX logged_models_run ON logged_models (run_id);
CREATE TABLE logged_model_params (
    model_id TEXT NOT NULL REFERENCES logged_models (id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (model_id, key)
);
CREATE TABLE logged_model_tags (
    model_id TEXT NOT NULL REFERENCES logged_models (id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (model_id, key)
);
-- A metric point linked to a model (runs/log-metric or log-batch with model_id): also in its
-- run's history, as MLflow keeps it twice.
CREATE TABLE logged_model_metrics (
    model_id       TEXT NOT NULL REFERENCES logged_models (id) ON DELETE CASCADE,
    key            TEXT NOT NULL,
    value          DOUBLE PRECISION NOT NULL,
    timestamp      BIGINT NOT NULL,
    step           BIGINT NOT NULL,
    run_id         TEXT NOT NULL DEFAULT '',
    dataset_name   TEXT NOT NULL DEFAULT '',
    dataset_digest TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (model_id, key, step, timestamp, dataset_name, dataset_digest)
);
-- The model's files (<exp>/models/<id>/artifacts/<path> through the mlflow-artifacts proxy),
-- in the shape of mlflow_artifacts.
CREATE TABLE logged_model_artifacts (
    model_id   TEXT NOT NULL REFERENCES logged_models (id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    hash       TEXT NOT NULL,
    size       BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (model_id, path)
);
-- A run's model inputs (runs/log-inputs models) and outputs (runs/outputs, with their step):
-- direction 'input' (step 0) or 'output'.
CREATE TABLE run_logged_models (
    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    direction TEXT NOT NULL,
    model_id  TEXT NOT NULL,
    step      BIGINT NOT NULL,
    PRIMARY KEY (run_id, direction, model_id, step)
);
