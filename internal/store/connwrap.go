package store

import (
	"context"
	"database/sql/driver"
)

// Both of the store's databases are reached through a wrapped driver connection: SQLite's keeps
// its prepared statements (stmtcache.go), PostgreSQL's rebinds queries and serialises
// transactions (postgres.go). What the two wrappers pass on as it is lives here.

// wrapConnector opens base's connections wrapped by wrap.
type wrapConnector struct {
	base driver.Connector
	wrap func(driver.Conn) driver.Conn
}

func (c wrapConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return c.wrap(conn), nil
}

func (c wrapConnector) Driver() driver.Driver { return c.base.Driver() }

// connBase is embedded in a wrapped connection: it closes the base connection, and passes on
// session resets, validity checks and pings where the base connection has them.
type connBase struct{ base driver.Conn }

var _ interface {
	driver.SessionResetter
	driver.Validator
	driver.Pinger
} = connBase{}

func (c connBase) Close() error { return c.base.Close() }

func (c connBase) ResetSession(ctx context.Context) error {
	if b, ok := c.base.(driver.SessionResetter); ok {
		return b.ResetSession(ctx)
	}
	return nil
}

func (c connBase) IsValid() bool {
	if b, ok := c.base.(driver.Validator); ok {
		return b.IsValid()
	}
	return true
}

func (c connBase) Ping(ctx context.Context) error {
	if b, ok := c.base.(driver.Pinger); ok {
		return b.Ping(ctx)
	}
	return nil
}
