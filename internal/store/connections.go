package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hangar-ml/hangar/internal/connection"
)

// StoredConnection is a workspace connection as stored: Sealed is its credentials' JSON sealed
// by the workspace.
type StoredConnection struct {
	connection.Connection
	Sealed string
}

// PutConnection creates or replaces a connection (its creation time is kept on a replace).
func (s *Assets) PutConnection(ctx context.Context, c StoredConnection) error {
	spec, err := json.Marshal(c.Connection)
	if err != nil {
		return err
	}
	return execStmt(ctx, s.db, "put connection "+c.Name,
		`INSERT INTO connections (name, spec, credentials, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, credentials = excluded.credentials`,
		c.Name, string(spec), c.Sealed, nanos(c.CreatedAt))
}

// Connection returns one connection, or ErrNotFound.
func (s *Assets) Connection(ctx context.Context, name string) (*StoredConnection, error) {
	c, err := scanConnection(s.db.QueryRowContext(ctx, `SELECT name, spec, credentials, created_at FROM connections WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("connection %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read connection %s: %w", name, err)
	}
	return c, nil
}

// Connections lists the connections by name.
func (s *Assets) Connections(ctx context.Context) ([]StoredConnection, error) {
	out, err := queryAll(ctx, s.db, values(scanConnection), `SELECT name, spec, credentials, created_at FROM connections ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	return out, nil
}

// DeleteConnection removes a connection; ErrNotFound when there is none of that name.
func (s *Assets) DeleteConnection(ctx context.Context, name string) error {
	return execOne(ctx, s.db, "delete connection "+name, "connection "+name, `DELETE FROM connections WHERE name = ?`, name)
}

func scanConnection(sc scanner) (*StoredConnection, error) {
	var c StoredConnection
	var spec string
	var created int64
	if err := sc.Scan(&c.Name, &spec, &c.Sealed, &created); err != nil {
		return nil, err
	}
	name := c.Name
	if err := json.Unmarshal([]byte(spec), &c.Connection); err != nil {
		return nil, fmt.Errorf("decode connection %s: %w", name, err)
	}
	c.Name, c.CreatedAt = name, fromNanos(created)
	return &c, nil
}
