-- +goose Up
-- MLflow's registered model tags (docs/mlflow.md "Model registry"): the model name's own, beside
-- its versions' tags (which are the versions' meta).
CREATE TABLE registered_model_tags (
    name  TEXT NOT NULL,
    key   TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (name, key)
);
