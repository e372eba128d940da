-- +goose Up
-- Compute instances (issue 17, design 0018): an instance is a compute target of type instance
-- whose node the cluster backend keeps (a one-node pool); this row is its life: the state the
-- user or a schedule or the idle judgement asked for, with the reason, the idle clock, how far
-- schedules were acted on, the setup script under way, and the node's last activity report.
-- No foreign key to computes: deleting the target deletes the row in the same transaction.
CREATE TABLE instances (
    name         TEXT PRIMARY KEY,
    state        TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    since        BIGINT NOT NULL,
    active_at    BIGINT,
    checked_to   BIGINT,
    -- created is 1 once the creation script (if any) succeeded: it never runs again.
    created      BIGINT NOT NULL DEFAULT 0,
    -- script_run is the run of the setup script under way or last run ('' none), script_kind
    -- which script it is (creation_script or startup_script).
    script_run   TEXT NOT NULL DEFAULT '',
    script_kind  TEXT NOT NULL DEFAULT '',
    starts       BIGINT NOT NULL DEFAULT 0,
    -- pending is an action to take once the current one is done ('start': a restart stopping).
    pending      TEXT NOT NULL DEFAULT '',
    idle         TEXT NOT NULL DEFAULT '',
    signals      TEXT NOT NULL DEFAULT '{}',
    updated_at   BIGINT NOT NULL
);
