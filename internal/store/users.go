package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// User is a workspace user and their role in it.
type User struct {
	Name      string
	Role      string
	CreatedAt time.Time
	// OIDCSubject is the OpenID Connect subject the user signs in to the studio as ("": none).
	OIDCSubject string
}

// UserToken is a personal API token as stored: its hash, never the token.
type UserToken struct {
	User, Name, Hash string
	CreatedAt        time.Time
	ExpiresAt        time.Time
	// RevokedAt and LastUsedAt are zero when it never happened.
	RevokedAt  time.Time
	LastUsedAt time.Time
}

// CreateUser adds a user; a user of that name is ErrExists.
func (s *Access) CreateUser(ctx context.Context, u User) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO users (name, role, created_at) VALUES (?, ?, ?)`,
		u.Name, u.Role, nanos(u.CreatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("user %s: %w", u.Name, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create user %s: %w", u.Name, err)
	}
	return nil
}

const userColumns = `name, role, created_at, oidc_subject`

func scanUser(sc scanner) (*User, error) {
	var u User
	var created int64
	if err := sc.Scan(&u.Name, &u.Role, &created, &u.OIDCSubject); err != nil {
		return nil, err
	}
	u.CreatedAt = fromNanos(created)
	return &u, nil
}

// GetUser returns a user, or ErrNotFound.
func (s *Access) GetUser(ctx context.Context, name string) (*User, error) {
	return getOne(s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE name = ?`, name), scanUser, "user", name)
}

// Users lists the users by name.
func (s *Access) Users(ctx context.Context) ([]User, error) {
	out, err := queryList(ctx, s.db, values(scanUser), `SELECT `+userColumns+` FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// SetUserRole changes a user's role; an unknown user is ErrNotFound.
func (s *Access) SetUserRole(ctx context.Context, name, role string) error {
	return execOne(ctx, s.db, "set role of "+name, "user "+name, `UPDATE users SET role = ? WHERE name = ?`, role, name)
}

// DeleteUser removes a user and their tokens in one transaction.
func (s *Access) DeleteUser(ctx context.Context, name string) error {
	return s.withTx(ctx, "delete user "+name, func(tx *sql.Tx) error {
		if err := execStmt(ctx, tx, "delete tokens of "+name, `DELETE FROM user_tokens WHERE user_name = ?`, name); err != nil {
			return err
		}
		return execOne(ctx, tx, "delete user "+name, "user "+name, `DELETE FROM users WHERE name = ?`, name)
	})
}

// CreateUserToken stores a personal token's hash; a token of that name for that user is ErrExists.
func (s *Access) CreateUserToken(ctx context.Context, t UserToken) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO user_tokens (user_name, name, hash, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`, t.User, t.Name, t.Hash, nanos(t.CreatedAt), nanos(t.ExpiresAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("token %s of %s: %w", t.Name, t.User, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create token %s of %s: %w", t.Name, t.User, err)
	}
	return nil
}

const tokenColumns = `user_name, name, hash, created_at, expires_at, revoked_at, last_used_at`

func scanToken(sc scanner) (UserToken, error) {
	var t UserToken
	var created, expires, revoked, used int64
	if err := sc.Scan(&t.User, &t.Name, &t.Hash, &created, &expires, &revoked, &used); err != nil {
		return t, err
	}
	t.CreatedAt, t.ExpiresAt = fromNanos(created), fromNanos(expires)
	if revoked != 0 {
		t.RevokedAt = fromNanos(revoked)
	}
	if used != 0 {
		t.LastUsedAt = fromNanos(used)
	}
	return t, nil
}

// UserTokenByHash finds a token by its hash, or ErrNotFound.
func (s *Access) UserTokenByHash(ctx context.Context, hash string) (*UserToken, error) {
	t, err := scanToken(s.db.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM user_tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("personal token: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read personal token: %w", err)
	}
	return &t, nil
}

// UserTokens lists a user's tokens (every user's when user is ""), by user and name.
func (s *Access) UserTokens(ctx context.Context, user string) ([]UserToken, error) {
	out, err := queryList(ctx, s.db, scanToken, `SELECT `+tokenColumns+` FROM user_tokens
		WHERE ? = '' OR user_name = ? ORDER BY user_name, name`, user, user)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeUserToken marks a token revoked at now (a token revoked already keeps its first time);
// an unknown token is ErrNotFound.
func (s *Access) RevokeUserToken(ctx context.Context, user, name string, now time.Time) error {
	return execOne(ctx, s.db, "revoke token "+name+" of "+user, "token "+name+" of "+user,
		`UPDATE user_tokens SET revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END
		WHERE user_name = ? AND name = ?`, nanos(now), user, name)
}

// TouchUserToken records a token's use at now when its last recorded use is older than
// before (one write a minute per token, not one per request).
func (s *Access) TouchUserToken(ctx context.Context, hash string, now, before time.Time) error {
	return execStmt(ctx, s.db, "record token use",
		`UPDATE user_tokens SET last_used_at = ? WHERE hash = ? AND last_used_at < ?`,
		nanos(now), hash, nanos(before))
}
