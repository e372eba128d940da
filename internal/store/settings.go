package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns a workspace setting; ok is false when unset.
func (s *Store) Setting(ctx context.Context, key string) (value string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return value, true, nil
}

// SetSetting stores a workspace setting.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	return execStmt(ctx, s.db, "write setting "+key,
		`INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
}

// Settings returns the settings whose keys start with prefix.
func (s *Store) Settings(ctx context.Context, prefix string) (map[string]string, error) {
	out, err := queryMap(ctx, s.db, scanPair[string, string], `SELECT key, value FROM settings WHERE substr(key, 1, length(?)) = ?`, prefix, prefix)
	if err != nil {
		return nil, fmt.Errorf("read settings %s*: %w", prefix, err)
	}
	return out, nil
}

// DeleteSetting removes a workspace setting; one that is not set is no error.
func (s *Store) DeleteSetting(ctx context.Context, key string) error {
	return execStmt(ctx, s.db, "delete setting "+key, `DELETE FROM settings WHERE key = ?`, key)
}
