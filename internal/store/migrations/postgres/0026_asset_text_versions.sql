-- +goose Up
-- Versions of models, data assets and components are strings, as Azure's are (0.0.1, v2, 1):
-- version becomes TEXT; number is the version's integer value when it is one (what a create
-- without a version counts up from); seq orders the versions by creation, which is what @latest
-- picks (issue 28).
ALTER TABLE models ALTER COLUMN version TYPE TEXT USING version::text;
ALTER TABLE models ADD COLUMN number BIGINT;
ALTER TABLE models ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE models SET number = CAST(version AS BIGINT);
UPDATE models m SET seq = r.n FROM (SELECT name, version, ROW_NUMBER() OVER (ORDER BY created_at, number) AS n FROM models) r
    WHERE m.name = r.name AND m.version = r.version;

ALTER TABLE data_assets ALTER COLUMN version TYPE TEXT USING version::text;
ALTER TABLE data_assets ADD COLUMN number BIGINT;
ALTER TABLE data_assets ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE data_assets SET number = CAST(version AS BIGINT);
UPDATE data_assets d SET seq = r.n FROM (SELECT name, version, ROW_NUMBER() OVER (ORDER BY created_at, number) AS n FROM data_assets) r
    WHERE d.name = r.name AND d.version = r.version;

ALTER TABLE components ALTER COLUMN version TYPE TEXT USING version::text;
ALTER TABLE components ADD COLUMN number BIGINT;
ALTER TABLE components ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE components SET number = CAST(version AS BIGINT);
UPDATE components c SET seq = r.n FROM (SELECT name, version, ROW_NUMBER() OVER (ORDER BY created_at, number) AS n FROM components) r
    WHERE c.name = r.name AND c.version = r.version;

CREATE INDEX models_latest ON models (name, seq);
CREATE INDEX data_assets_latest ON data_assets (name, seq);
CREATE INDEX components_latest ON components (name, seq);
