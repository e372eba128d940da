-- +goose Up
-- Versions of models, data assets and components are strings, as Azure's are (0.0.1, v2, 1):
-- version becomes TEXT (rebuilt, since SQLite cannot change a column's type, and an INTEGER
-- column would read "1.0" as 1); number is the version's integer value when it is one (what a
-- create without a version counts up from); seq orders the versions by creation, which is what
-- @latest picks (issue 28). The columns are in PostgreSQL's order (added at the end there).
CREATE TABLE models_v (
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    spec       TEXT NOT NULL,
    archived   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    number     INTEGER,
    seq        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (name, version)
);
INSERT INTO models_v (name, version, spec, archived, created_at, number, seq)
    SELECT name, CAST(version AS TEXT), spec, archived, created_at, version,
           ROW_NUMBER() OVER (ORDER BY created_at, version) FROM models;
DROP TABLE models;
ALTER TABLE models_v RENAME TO models;

CREATE TABLE data_assets_v (
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    spec       TEXT NOT NULL,
    archived   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    number     INTEGER,
    seq        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (name, version)
);
INSERT INTO data_assets_v (name, version, spec, archived, created_at, number, seq)
    SELECT name, CAST(version AS TEXT), spec, archived, created_at, version,
           ROW_NUMBER() OVER (ORDER BY created_at, version) FROM data_assets;
DROP TABLE data_assets;
ALTER TABLE data_assets_v RENAME TO data_assets;

CREATE TABLE components_v (
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    spec       TEXT NOT NULL,
    archived   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    number     INTEGER,
    seq        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (name, version)
);
INSERT INTO components_v (name, version, spec, archived, created_at, number, seq)
    SELECT name, CAST(version AS TEXT), spec, archived, created_at, version,
           ROW_NUMBER() OVER (ORDER BY created_at, version) FROM components;
DROP TABLE components;
ALTER TABLE components_v RENAME TO components;

CREATE INDEX models_latest ON models (name, seq);
CREATE INDEX data_assets_latest ON data_assets (name, seq);
CREATE INDEX components_latest ON components (name, seq);
