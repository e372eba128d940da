package store

import (
	"context"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
)

// SQLite parses a statement every time one is prepared, and database/sql prepares every query it
// is given (the driver's own Query and Exec prepare too). For the store's short statements the
// parse cost more than running them: under a load of trivial jobs it was a fifth of the server's
// CPU (perf, BENCHMARKS.md). So each connection keeps the statements it prepared, by text, and
// hands the same one out again; every query of every file of this package goes through it.

// maxCachedStmts bounds a connection's cache: queries built from filters have a few shapes each,
// and a shape beyond the bound is prepared afresh every time, as before.
const maxCachedStmts = 256

// newCachingConnector opens SQLite connections that keep their prepared statements.
func newCachingConnector(dsn string) (driver.Connector, error) {
	base, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return wrapConnector{base: base, wrap: func(c driver.Conn) driver.Conn {
		return &cachingConn{connBase: connBase{c}, stmts: map[string]*cachedStmt{}}
	}}, nil
}

// cachingConn is one connection; database/sql uses a connection from one goroutine at a time.
// It passes on the base connection's optional interfaces but for QueryerContext and
// ExecerContext, so that database/sql prepares through the cache rather than letting the driver
// prepare a statement of its own.
type cachingConn struct {
	connBase
	stmts map[string]*cachedStmt
}

var (
	_ driver.ConnPrepareContext = (*cachingConn)(nil)
	_ driver.ConnBeginTx        = (*cachingConn)(nil)
)

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext returns the connection's statement for query, unless that one is in use (rows
// of it are still being read): then, and past the cache's bound, a statement of its own.
func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if s, ok := c.stmts[query]; ok && !s.leased {
		s.leased = true
		return s, nil
	}
	st, err := c.basePrepare(ctx, query)
	if err != nil {
		return nil, err
	}
	if _, ok := c.stmts[query]; ok || len(c.stmts) >= maxCachedStmts {
		return st, nil
	}
	s := &cachedStmt{Stmt: st, leased: true}
	c.stmts[query] = s
	return s, nil
}

func (c *cachingConn) basePrepare(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.base.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.base.Prepare(query)
}

// Close finalizes the cached statements, then closes the connection (SQLite keeps a connection
// with unfinalized statements open).
func (c *cachingConn) Close() error {
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.Stmt.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.base.Close())...)
}

func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.base.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return c.base.Begin() //nolint:staticcheck // a driver without BeginTx
}

// cachedStmt is a statement kept by its connection. It is leased from PrepareContext until
// database/sql closes it (after the last execution, or once the rows of a query are closed).
type cachedStmt struct {
	driver.Stmt
	leased bool
}

// Close returns the statement to its connection's cache.
func (s *cachedStmt) Close() error {
	s.leased = false
	return nil
}

func (s *cachedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *cachedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
