-- +goose Up
-- job list filters and pages by status, experiment and compute in creation order: one index per
-- filter, in the list's order, so that a page costs its rows and not the workspace's history.
CREATE INDEX runs_status_created ON runs (status, created_at, id);
CREATE INDEX runs_experiment_created ON runs (experiment_name, created_at, id);
CREATE INDEX runs_compute_created ON runs (compute, created_at, id);
-- An archived run is hidden from job list (job archive / job restore); nothing else changes.
ALTER TABLE runs ADD COLUMN archived BIGINT NOT NULL DEFAULT 0;
-- The command as the supervisor bound it (inputs and outputs replaced by their values and node
-- paths), reported with Running: what job show prints as what ran.
ALTER TABLE runs ADD COLUMN bound_command TEXT NOT NULL DEFAULT '';
