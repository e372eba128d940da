// Package store persists the workspace (runs, events, logs, metrics, compute targets) in SQLite with numbered embedded migrations, checks database files before opening them and copies them consistently for backups; it holds no business rules.
package store
