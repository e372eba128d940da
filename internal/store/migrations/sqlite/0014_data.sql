-- +goose Up
-- Data assets and datastores (issue 15). data_assets has the shape of models (0011): integer
-- versions per name, the rest of the version as JSON in spec. datastores holds the datastores
-- users create (workspaceblobstore is built in, never stored). datastore_paths records what was
-- written at a path of workspaceblobstore: an upload's manifest, or a job's output (run and
-- output, read once the job has finished). It depends on no migration after 0011; the runner
-- applies each number it has not recorded, so the unused number 0014 is harmless.
CREATE TABLE data_assets (
    name       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    spec       TEXT NOT NULL,
    archived   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (name, version)
);

CREATE TABLE datastores (
    name       TEXT PRIMARY KEY,
    spec       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE datastore_paths (
    datastore  TEXT NOT NULL,
    path       TEXT NOT NULL,
    manifest   TEXT NOT NULL DEFAULT '',
    run_id     TEXT NOT NULL DEFAULT '',
    output     TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (datastore, path)
);
