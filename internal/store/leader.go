package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Leadership of a workspace served by several servers on one PostgreSQL database (design 0020):
// the leader is the server whose database session holds a session advisory lock. The lock lives
// as long as that session: a leader killed, or cut from the database, loses it when PostgreSQL
// sees the connection end, and the next server to try takes it.

// leaderLockKey is the leader's session advisory lock ("leader" in ASCII); txLockKey and goose's
// migration lock are other keys.
const leaderLockKey = 0x6c6561646572

// ErrNoReplicas means the workspace's database cannot be shared by several servers (SQLite).
var ErrNoReplicas = errors.New("several servers need the workspace on PostgreSQL (--database postgres://...)")

// Leadership is the leader lock held on a database session of its own.
type Leadership struct {
	conn *sql.Conn
}

// TryLead takes the leader lock if no other session holds it: nil (and no error) when another
// does. On SQLite it returns ErrNoReplicas.
func (s *Store) TryLead(ctx context.Context) (*Leadership, error) {
	if !isPostgresURL(s.dsn) {
		return nil, ErrNoReplicas
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("leader lock: %w", err)
	}
	// A leader cut off by the network holds the lock until PostgreSQL sees its connection is
	// dead: with the operating system's keepalive defaults, hours. These bound it to about 15 s
	// (the leader itself stops sooner: its check times out).
	if _, err := conn.ExecContext(ctx, `SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2;
		SET tcp_keepalives_count = 3; SET tcp_user_timeout = 10000`); err != nil {
		conn.Close()
		return nil, fmt.Errorf("leader lock: session settings: %w", err)
	}
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, int64(leaderLockKey)).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("leader lock: %w", err)
	}
	if !got {
		conn.Close()
		return nil, nil
	}
	return &Leadership{conn: conn}, nil
}

// Check confirms that the session holding the lock is still there (and so the lock with it).
func (l *Leadership) Check(ctx context.Context) error {
	var held bool
	err := l.conn.QueryRowContext(ctx,
		`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
		 AND ((classid::bigint << 32) | objid::bigint) = ?)`, int64(leaderLockKey)).Scan(&held)
	if err != nil {
		return fmt.Errorf("leader lock: the database session is lost: %w", err)
	}
	if !held {
		return errors.New("leader lock: no longer held by this session")
	}
	return nil
}

// Release gives the lock up (closing its session), for another server to take.
func (l *Leadership) Release() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = l.conn.ExecContext(ctx, `SELECT pg_advisory_unlock(?)`, int64(leaderLockKey))
	_ = l.conn.Raw(func(any) error { return driver.ErrBadConn }) // its session ends: never back into the pool
	_ = l.conn.Close()
}

// ServerRecord is one server of a workspace, as it records itself (design 0020).
type ServerRecord struct {
	ID     string    `json:"id"`
	URL    string    `json:"url"`
	Leader bool      `json:"leader"`
	Since  time.Time `json:"since,omitempty"` // when it took the lead
	Seen   time.Time `json:"seen"`            // when it last refreshed its record
}

// serverPrefix keys the servers' records among the workspace settings.
const serverPrefix = "server/"

// SaveServerRecord records (or refreshes) a server's record.
func (s *Store) SaveServerRecord(ctx context.Context, r ServerRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.SetSetting(ctx, serverPrefix+r.ID, string(b))
}

// ServerRecords lists the servers' records, in no particular order.
func (s *Store) ServerRecords(ctx context.Context) ([]ServerRecord, error) {
	m, err := s.Settings(ctx, serverPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]ServerRecord, 0, len(m))
	for k, v := range m {
		var r ServerRecord
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return nil, fmt.Errorf("read setting %s: %w", k, err)
		}
		r.ID = strings.TrimPrefix(k, serverPrefix)
		out = append(out, r)
	}
	return out, nil
}

// DatabaseNow is the database server's clock: the servers of a workspace time their records by
// it, so that their own clocks need not agree. A SQLite workspace has one server: its clock.
func (s *Store) DatabaseNow(ctx context.Context) (time.Time, error) {
	if !isPostgresURL(s.dsn) {
		return time.Now().UTC(), nil
	}
	var now time.Time
	if err := s.db.QueryRowContext(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("read the database's clock: %w", err)
	}
	return now.UTC(), nil
}

// DeleteServerRecord forgets a server's record.
func (s *Store) DeleteServerRecord(ctx context.Context, id string) error {
	return execStmt(ctx, s.db, "delete setting "+serverPrefix+id, `DELETE FROM settings WHERE key = ?`, serverPrefix+id)
}
