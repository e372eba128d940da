-- +goose Up
-- A run requeued after losing its node (preemption) starts a new attempt; reports from an older
-- attempt's supervisor are refused.
ALTER TABLE runs ADD COLUMN attempt BIGINT NOT NULL DEFAULT 1;
