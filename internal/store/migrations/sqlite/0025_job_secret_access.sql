-- +goose Up
-- Per-secret access (issue 27, docs/secrets.md): the users and the roles that may name a secret
-- in their jobs, as JSON arrays of names ('' for none). With neither, every user who may submit
-- jobs may use it; with either, only those listed, and owners.
ALTER TABLE job_secrets ADD COLUMN allowed_users TEXT NOT NULL DEFAULT '';
ALTER TABLE job_secrets ADD COLUMN allowed_roles TEXT NOT NULL DEFAULT '';
