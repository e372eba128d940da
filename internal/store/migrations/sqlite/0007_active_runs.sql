-- +goose Up
-- The controller reads the active runs on every pass (once a second): an index of those alone,
-- in the order it reads them, so that a pass costs what is active, not the workspace's history
-- (with 10,000 ended runs the scan took 14 ms a pass; store.activeStates must match the list).
CREATE INDEX runs_active ON runs (created_at, id) WHERE status NOT IN ('Completed', 'Failed', 'Canceled');
