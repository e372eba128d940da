-- +goose Up
-- Each node's part of a run attempt: the manifests its supervisor collected (node 0's, and on a
-- multi-node run every other node's), and a non-leading node's failure. A run's artifacts are
-- assembled from its parts once; a part, once registered, never changes.
CREATE TABLE run_parts (
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt       BIGINT NOT NULL,
    node_rank     BIGINT NOT NULL,
    artifacts     TEXT NOT NULL DEFAULT '',   -- manifest hash; '' until the node registered it
    named_outputs TEXT NOT NULL DEFAULT '{}', -- output name → manifest hash
    registered_at BIGINT,
    failure       TEXT NOT NULL DEFAULT '',   -- why the node failed ('' when it did not)
    exit_code     BIGINT,
    failed_at     BIGINT,
    PRIMARY KEY (run_id, attempt, node_rank)
);
