-- +goose Up
-- MLflow's registered model aliases (docs/mlflow.md "Model registry"): a name for one version
-- of a model (champion → 3), moved by setting it again, gone with the alias's delete.
CREATE TABLE model_aliases (
    name    TEXT NOT NULL,
    alias   TEXT NOT NULL,
    version TEXT NOT NULL,
    PRIMARY KEY (name, alias)
);
