-- +goose Up
-- Managed clusters: their nodes (hangar agents), the nodes' timeline, the work queued for each
-- node, and the workspace's own node sizes.
CREATE TABLE nodes (
    id             TEXT PRIMARY KEY,
    pool           TEXT NOT NULL,             -- the cluster (compute target) name
    state          TEXT NOT NULL,             -- provisioning|idle|running|releasing|preempted|unusable
    state_reason   TEXT NOT NULL DEFAULT '',
    size           TEXT NOT NULL DEFAULT '',
    low_priority   INTEGER NOT NULL DEFAULT 0,
    capacity       TEXT NOT NULL DEFAULT '{}', -- resources.Vector as JSON
    allocated      TEXT NOT NULL DEFAULT '{}',
    gpus           TEXT NOT NULL DEFAULT '[]', -- []compute.GPU
    labels         TEXT NOT NULL DEFAULT '{}',
    info           TEXT NOT NULL DEFAULT '{}', -- compute.NodeInfo
    runs           TEXT NOT NULL DEFAULT '[]', -- what the agent last reported running
    provider_id    TEXT NOT NULL DEFAULT '',
    join_deadline  INTEGER,
    created_at     INTEGER NOT NULL,
    joined_at      INTEGER,
    last_heartbeat INTEGER,
    idle_since     INTEGER
);
CREATE INDEX nodes_pool ON nodes (pool, state);

-- No foreign key: the timeline outlives the nodes it tells about.
CREATE TABLE node_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    pool       TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    time       INTEGER NOT NULL,
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX node_events_pool ON node_events (pool, seq);
CREATE INDEX node_events_node ON node_events (node_id, seq);

-- Work for a node, delivered in heartbeat replies until the agent acknowledges it.
CREATE TABLE node_assignments (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id      TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    run_id       TEXT NOT NULL,
    kind         TEXT NOT NULL,               -- assign|cancel
    created_at   INTEGER NOT NULL,
    delivered_at INTEGER,
    acked_at     INTEGER,
    UNIQUE (node_id, run_id, kind)
);
CREATE INDEX node_assignments_pending ON node_assignments (node_id, acked_at, id);

CREATE TABLE sizes (
    name           TEXT PRIMARY KEY COLLATE NOCASE,
    cores          INTEGER NOT NULL,
    memory_bytes   INTEGER NOT NULL,
    gpus           INTEGER NOT NULL DEFAULT 0,
    gpu_model      TEXT NOT NULL DEFAULT '',
    price_per_hour REAL NOT NULL DEFAULT 0,
    family         TEXT NOT NULL,
    created_at     INTEGER NOT NULL
);
