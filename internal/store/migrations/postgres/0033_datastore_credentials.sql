-- +goose Up
-- Object-storage datastores (issue 31, docs/data.md "Datastores"): their credentials (an
-- account key, a SAS token, a service principal, S3 keys, a GCS service account) are sealed with
-- the workspace key in a column of their own, never in spec (which list and show answer), and
-- resealed with the job secrets when the key rotates; '' is the node's ambient identity. The
-- last run whose supervisor fetched them, and when, as job secrets record theirs.
ALTER TABLE datastores ADD COLUMN credentials TEXT NOT NULL DEFAULT '';
ALTER TABLE datastores ADD COLUMN last_used_run TEXT NOT NULL DEFAULT '';
ALTER TABLE datastores ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
