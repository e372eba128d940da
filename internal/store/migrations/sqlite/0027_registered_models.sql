-- +goose Up
-- MLflow's registered models (docs/mlflow.md "Model registry"): a model name registered through
-- registered-models/create, which may have no version yet, with its description. A name with
-- versions in models is a registered model whether or not it has a row here.
CREATE TABLE registered_models (
    name        TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
);
