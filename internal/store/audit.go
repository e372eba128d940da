package store

import (
	"context"
	"fmt"
	"time"
)

// AuditEntry is one change recorded in the audit log: who did what to which object.
type AuditEntry struct {
	ID     int64
	At     time.Time
	User   string
	Action string
	Object string
	Detail string
}

// AddAudit appends an entry to the audit log.
func (s *Access) AddAudit(ctx context.Context, e AuditEntry) error {
	return execStmt(ctx, s.db, "audit "+e.Action+" "+e.Object,
		`INSERT INTO audit_log (at, user_name, action, object, detail) VALUES (?, ?, ?, ?, ?)`,
		nanos(e.At), e.User, e.Action, e.Object, e.Detail)
}

// AuditFilter narrows Audit: by user ("" any), since a time (zero: from the start), and at
// most Limit entries (0: 1000), the newest kept.
type AuditFilter struct {
	User  string
	Since time.Time
	Limit int
}

// Audit lists audit entries, oldest first.
func (s *Access) Audit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	since := int64(0)
	if !f.Since.IsZero() {
		since = nanos(f.Since)
	}
	out, err := queryList(ctx, s.db, scanAuditEntry, `SELECT id, at, user_name, action, object, detail FROM (
		SELECT * FROM audit_log WHERE (? = '' OR user_name = ?) AND at >= ? ORDER BY id DESC LIMIT ?) AS newest
		ORDER BY id`, f.User, f.User, since, limit)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return out, nil
}

func scanAuditEntry(sc scanner) (e AuditEntry, err error) {
	var at int64
	err = sc.Scan(&e.ID, &at, &e.User, &e.Action, &e.Object, &e.Detail)
	e.At = fromNanos(at)
	return e, err
}
