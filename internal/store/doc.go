// Package store persists the workspace (runs, events, logs, metrics, compute targets) in SQLite with numbered embedded migrations; it holds no business rules.
package store
