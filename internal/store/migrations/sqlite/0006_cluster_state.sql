-- +goose Up
-- Where each run's current attempt was placed on a target that places runs itself (a managed
-- cluster): its nodes in rank order and the GPUs it holds on each. Generic run data: the
-- controller writes it, whichever backend placed the run.
CREATE TABLE run_placements (
    run_id    TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    attempt   INTEGER NOT NULL,
    nodes     TEXT NOT NULL,              -- JSON array of node ids, rank order
    gpus      TEXT NOT NULL DEFAULT '{}', -- JSON: node id → GPU indexes
    placed_at INTEGER NOT NULL
);

-- The attempts of a run that lost their node to preemption: counted against the cluster policy's
-- MaxPreemptionRetries, so the count survives a restart. One row per attempt: recording the same
-- preemption again changes nothing.
CREATE TABLE run_preemptions (
    run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    node_id TEXT NOT NULL,
    at      INTEGER NOT NULL,
    PRIMARY KEY (run_id, attempt)
);

-- Each managed cluster's decision state: its provisioning failure record (the backoff), the last
-- provisioning failure waiting runs show, and the last scaling decision compute show prints.
CREATE TABLE cluster_state (
    pool            TEXT PRIMARY KEY,
    failures        INTEGER NOT NULL DEFAULT 0,
    last_failure    INTEGER,
    provision_error TEXT NOT NULL DEFAULT '',
    last_error      TEXT NOT NULL DEFAULT '',
    target_nodes    INTEGER NOT NULL DEFAULT 0,
    current_nodes   INTEGER NOT NULL DEFAULT 0,
    explain         TEXT NOT NULL DEFAULT '[]',
    updated_at      INTEGER NOT NULL
);

-- Runs placed by a server before this migration carry their nodes in the cluster backend's
-- handle only: give them their placement, so that a run live across the upgrade keeps its nodes.
INSERT INTO run_placements (run_id, attempt, nodes, gpus, placed_at)
SELECT r.id, r.attempt, json_extract(r.handle, '$.nodes'), COALESCE(json_extract(r.handle, '$.gpus'), '{}'),
       r.created_at
FROM runs r JOIN computes c ON c.name = r.compute
WHERE c.type = 'cluster' AND r.handle IS NOT NULL AND json_valid(r.handle)
  AND json_type(r.handle, '$.nodes') = 'array'
  AND r.status NOT IN ('Completed', 'Failed', 'Canceled');
