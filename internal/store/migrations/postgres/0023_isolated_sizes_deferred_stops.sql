-- +goose Up
-- Issue 17 loose ends.
-- A workspace size may be isolated: a run of it never shares a node with another run.
ALTER TABLE sizes ADD COLUMN isolated BIGINT NOT NULL DEFAULT 0;
-- An instance's scheduled stop that fired while jobs ran, waiting for them to end: JSON
-- {"schedule", "at"} (instance.Deferred), '' when none.
ALTER TABLE instances ADD COLUMN deferred_stop TEXT NOT NULL DEFAULT '';
