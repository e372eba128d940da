-- +goose Up
-- A deleted version (MLflow's model-versions/delete and registered-models/delete, `hangar model
-- delete`) is a tombstone: its row stays, with the time it was deleted, so that its number is
-- never given again (createAsset counts every row), while every read (list, get, @latest,
-- MLflow's registry) leaves it out. Data assets and components share the table shape and its
-- queries, so they have the column too (none of their verbs deletes yet).
ALTER TABLE models ADD COLUMN deleted_at INTEGER;
ALTER TABLE data_assets ADD COLUMN deleted_at INTEGER;
ALTER TABLE components ADD COLUMN deleted_at INTEGER;
