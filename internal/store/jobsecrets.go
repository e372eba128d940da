package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// JobSecret is a workspace secret as stored: Sealed is its value sealed by the controller.
type JobSecret struct {
	Name        string
	Sealed      string
	Access      SecretAccess
	CreatedAt   time.Time
	UpdatedAt   time.Time
	LastUsedRun string
	LastUsedAt  time.Time
}

// SecretAccess is who may name a secret in a job, as stored: users and roles by name. Empty,
// every user who may submit jobs may (the controller decides; owners always may).
type SecretAccess struct {
	Users []string
	Roles []string
}

// PutJobSecret stores a secret's sealed value, creating it or replacing its value (its creation
// time and last use are kept); created says which. A non-nil access replaces who may use it in
// the same transaction; nil keeps it (a new secret's is empty).
func (s *Assets) PutJobSecret(ctx context.Context, name, sealed string, access *SecretAccess, at time.Time) (created bool, err error) {
	err = s.inTx(ctx, "store secret "+name, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_secrets SET value = ?, updated_at = ? WHERE name = ?`, sealed, nanos(at), name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			created = true
			if _, err = tx.ExecContext(ctx, `INSERT INTO job_secrets (name, value, created_at, updated_at) VALUES (?, ?, ?, ?)`,
				name, sealed, nanos(at), nanos(at)); err != nil {
				return err
			}
		}
		if access == nil {
			return nil
		}
		return putSecretAccess(ctx, tx, name, *access)
	})
	return created, err
}

// SetJobSecretAccess replaces who may use a secret; ErrNotFound when there is none of that name.
func (s *Assets) SetJobSecretAccess(ctx context.Context, name string, access SecretAccess) error {
	return s.inTx(ctx, "store the access of secret "+name, func(tx *sql.Tx) error {
		if err := requireRow(ctx, tx, "job_secrets", "secret "+name, name); err != nil {
			return err
		}
		return putSecretAccess(ctx, tx, name, access)
	})
}

func putSecretAccess(ctx context.Context, tx *sql.Tx, name string, a SecretAccess) error {
	_, err := tx.ExecContext(ctx, `UPDATE job_secrets SET allowed_users = ?, allowed_roles = ? WHERE name = ?`,
		namesJSON(a.Users), namesJSON(a.Roles), name)
	return err
}

// namesJSON is a list of names as its column holds it: a JSON array, the empty string for none.
func namesJSON(names []string) string {
	if len(names) == 0 {
		return ""
	}
	b, _ := json.Marshal(names) // strings: never fails
	return string(b)
}

func namesOf(col string) ([]string, error) {
	if col == "" {
		return nil, nil
	}
	var out []string
	return out, json.Unmarshal([]byte(col), &out)
}

// JobSecrets lists the secrets by name, with their sealed values.
func (s *Assets) JobSecrets(ctx context.Context) ([]JobSecret, error) {
	out, err := queryAll(ctx, s.db, scanJobSecret, `SELECT name, value, allowed_users, allowed_roles, created_at, updated_at,
		last_used_run, last_used_at FROM job_secrets ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	return out, nil
}

func scanJobSecret(sc scanner) (j JobSecret, err error) {
	var users, roles string
	var created, updated, used int64
	if err := sc.Scan(&j.Name, &j.Sealed, &users, &roles, &created, &updated, &j.LastUsedRun, &used); err != nil {
		return j, err
	}
	if j.Access.Users, err = namesOf(users); err != nil {
		return j, fmt.Errorf("secret %s: allowed_users: %w", j.Name, err)
	}
	if j.Access.Roles, err = namesOf(roles); err != nil {
		return j, fmt.Errorf("secret %s: allowed_roles: %w", j.Name, err)
	}
	j.CreatedAt, j.UpdatedAt = fromNanos(created), fromNanos(updated)
	if used != 0 {
		j.LastUsedAt = fromNanos(used)
	}
	return j, nil
}

// DeleteJobSecret removes a secret; ErrNotFound when there is none of that name.
func (s *Assets) DeleteJobSecret(ctx context.Context, name string) error {
	return execOne(ctx, s.db, "delete secret "+name, "secret "+name, `DELETE FROM job_secrets WHERE name = ?`, name)
}

// MarkJobSecretsUsed records that run fetched the named secrets at at.
func (s *Assets) MarkJobSecretsUsed(ctx context.Context, names []string, run string, at time.Time) error {
	return s.inTx(ctx, "record the use of secrets", func(tx *sql.Tx) error {
		for _, n := range names {
			if _, err := tx.ExecContext(ctx, `UPDATE job_secrets SET last_used_run = ?, last_used_at = ? WHERE name = ?`,
				run, nanos(at), n); err != nil {
				return err
			}
		}
		return nil
	})
}

// Resealer turns what is sealed under one key into the same under another; changed is false
// when the value needs nothing (already under the new key).
type Resealer struct {
	// Value reseals one sealed value (a job secret, an endpoint's keys).
	Value func(sealed string) (out string, changed bool, err error)
	// Compute reseals the secret fields of a target's Properties.
	Compute func(t compute.Target) (props []byte, changed bool, err error)
}

// Reseal rewrites every sealed value of the workspace (job secrets, endpoints' keys, webhooks'
// secrets, datastores' and connections' credentials, compute targets' passwords and private keys) through r in one transaction, and says how many it
// changed: all of them or, when any fails, none.
func (s *Assets) Reseal(ctx context.Context, r Resealer) (changed int, err error) {
	err = s.inTx(ctx, "reseal the workspace's secrets", func(tx *sql.Tx) error {
		changed = 0
		for _, tbl := range []struct{ table, key, col string }{
			{"job_secrets", "name", "value"}, {"endpoints", "name", "keys"}, {"registry_webhooks", "id", "secret"},
			{"datastores", "name", "credentials"},
			{"connections", "name", "credentials"},
		} {
			n, err := resealColumn(ctx, tx, tbl.table, tbl.key, tbl.col, r.Value)
			if err != nil {
				return err
			}
			changed += n
		}
		n, err := resealComputes(ctx, tx, r.Compute)
		changed += n
		return err
	})
	if err != nil {
		return 0, err
	}
	return changed, nil
}

// resealColumn reseals the non-empty values of one column; table names come from Reseal only.
func resealColumn(ctx context.Context, tx *sql.Tx, table, key, col string, fn func(string) (string, bool, error)) (int, error) {
	type row struct{ k, v string }
	all, err := queryAll(ctx, tx, func(sc scanner) (r row, err error) {
		err = sc.Scan(&r.k, &r.v)
		return r, err
	}, `SELECT `+key+`, `+col+` FROM `+table+` WHERE `+col+` != ''`)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", table, err)
	}
	n := 0
	for _, r := range all {
		out, changed, err := fn(r.v)
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", table, r.k, err)
		}
		if !changed {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+col+` = ? WHERE `+key+` = ?`, out, r.k); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

func resealComputes(ctx context.Context, tx *sql.Tx, fn func(compute.Target) ([]byte, bool, error)) (int, error) {
	all, err := queryAll(ctx, tx, values(scanCompute), `SELECT name, type, description, properties, created_at FROM computes`)
	if err != nil {
		return 0, fmt.Errorf("read computes: %w", err)
	}
	n := 0
	for _, t := range all {
		props, changed, err := fn(t)
		if err != nil {
			return 0, fmt.Errorf("compute %s: %w", t.Name, err)
		}
		if !changed {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE computes SET properties = ? WHERE name = ?`, string(props), t.Name); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}
