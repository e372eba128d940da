-- +goose Up
-- Pipeline jobs (issue 15): a pipeline is a parent run, never handed to a backend; its steps are
-- ordinary runs. A step's row is keyed (pipeline, step) and written in the transaction that
-- creates its run, so a step is never started twice, across a restart too. A step reused from
-- the step cache or skipped has a row and no run (run_id ''). No foreign keys, as for sweep
-- trials: deleting an ended step's run leaves its row.
CREATE TABLE pipeline_steps (
    pipeline    TEXT NOT NULL,
    step        TEXT NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    -- state is the pipeline's view of a step with no run ('completed' when reused, 'skipped');
    -- a step with a run takes its state from the run.
    state       TEXT NOT NULL DEFAULT '',
    reused_from TEXT NOT NULL DEFAULT '',
    cache_key   TEXT NOT NULL DEFAULT '',
    reason      TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (pipeline, step)
);
CREATE INDEX pipeline_steps_run ON pipeline_steps (run_id) WHERE run_id <> '';
CREATE INDEX pipeline_steps_cache ON pipeline_steps (cache_key) WHERE cache_key <> '';
-- A pipeline's outcome: why it ended, naming the failing step.
CREATE TABLE pipelines (
    run_id      TEXT PRIMARY KEY,
    done_reason TEXT NOT NULL DEFAULT ''
);
