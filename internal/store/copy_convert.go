package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// columnKind is how a destination column takes a value read from SQLite, whose columns hold
// what they were given.
type columnKind int

const (
	kindAny columnKind = iota
	kindInt
	kindFloat
	kindText
	kindBytes
	kindBool
)

// kindOf maps a column's declared type (SQLite's or PostgreSQL's data_type) to its kind.
func kindOf(typ string) columnKind {
	t := strings.ToLower(typ)
	switch {
	case strings.Contains(t, "int"):
		return kindInt
	case strings.Contains(t, "bool"):
		return kindBool
	case strings.Contains(t, "real"), strings.Contains(t, "double"), strings.Contains(t, "float"), strings.Contains(t, "numeric"):
		return kindFloat
	case strings.Contains(t, "bytea"), strings.Contains(t, "blob"):
		return kindBytes
	case strings.Contains(t, "text"), strings.Contains(t, "char"), strings.Contains(t, "json"):
		return kindText
	}
	return kindAny
}

// columnKinds is the kind of each column of table t in s (read within tx on PostgreSQL).
func (s *Store) columnKinds(ctx context.Context, tx *sql.Tx, t string) (map[string]columnKind, error) {
	q := `SELECT name, type FROM pragma_table_info(?)`
	if s.dialect.postgres() {
		q = `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?`
	}
	out, err := queryMap(ctx, tx, func(sc scanner) (name string, kind columnKind, err error) {
		var typ string
		err = sc.Scan(&name, &typ)
		return name, kindOf(typ), err
	}, q, t)
	if err != nil {
		return nil, fmt.Errorf("columns of %s in the destination: %w", t, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the destination has no table %s", t)
	}
	return out, nil
}

// convertValue makes v, as SQLite returned it, a value of kind k.
func convertValue(v any, k columnKind) (any, error) {
	if v == nil || k == kindAny {
		return v, nil
	}
	switch x := v.(type) {
	case []byte:
		if k == kindBytes {
			return x, nil
		}
		return convertValue(string(x), k)
	case int64:
		switch k {
		case kindInt:
			return x, nil
		case kindFloat:
			return float64(x), nil
		case kindBool:
			return x != 0, nil
		case kindText:
			return strconv.FormatInt(x, 10), nil
		}
	case float64:
		switch k {
		case kindFloat:
			return x, nil
		case kindInt:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
		case kindText:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
	case string:
		switch k {
		case kindText:
			return x, nil
		case kindBytes:
			return []byte(x), nil
		case kindInt:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, nil
			}
		case kindFloat:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f, nil
			}
		}
	case bool:
		if k == kindBool {
			return x, nil
		}
		if k == kindInt {
			return map[bool]int64{false: 0, true: 1}[x], nil
		}
	}
	return nil, fmt.Errorf("a %T value (%.40v) does not fit the destination's column", v, v)
}

// resetIdentities makes each identity column of a PostgreSQL destination continue after the
// largest id copied into it (SQLite's AUTOINCREMENT follows explicit ids by itself).
func (s *Store) resetIdentities(ctx context.Context, tx *sql.Tx) error {
	if !s.dialect.postgres() {
		return nil
	}
	type col struct{ table, column string }
	cols, err := queryAll(ctx, tx, func(sc scanner) (c col, err error) {
		err = sc.Scan(&c.table, &c.column)
		return c, err
	}, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return fmt.Errorf("list the identity columns: %w", err)
	}
	for _, c := range cols {
		q := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence(?, ?), COALESCE((SELECT MAX(%s) FROM %s), 0) + 1, false)`,
			quoteIdent(c.column), quoteIdent(c.table))
		if _, err := tx.ExecContext(ctx, q, quoteIdent(c.table), c.column); err != nil {
			return fmt.Errorf("continue the ids of %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}
