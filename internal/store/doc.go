// Package store persists the workspace (runs, events, logs, metrics, compute targets) in SQLite, or in PostgreSQL for a postgres:// URL (design 0019), with numbered embedded goose migrations per dialect, checks SQLite files before opening them and copies them consistently for backups; it holds no business rules.
package store
