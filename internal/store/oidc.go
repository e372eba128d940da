package store

import (
	"context"
	"fmt"
	"strconv"
)

// CreateUserWithOIDC adds a user linked to the OpenID Connect subject (none when empty), in
// one statement: a user of that name, or a subject linked already, is ErrExists.
func (s *Access) CreateUserWithOIDC(ctx context.Context, u User, subject string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO users (name, role, created_at, oidc_subject) VALUES (?, ?, ?, ?)`,
		u.Name, u.Role, nanos(u.CreatedAt), subject)
	if isUniqueViolation(err) {
		return fmt.Errorf("user %s or OpenID Connect subject %q: %w", u.Name, subject, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create user %s: %w", u.Name, err)
	}
	return nil
}

// UserByOIDCSubject returns the user linked to an OpenID Connect subject, or ErrNotFound.
func (s *Access) UserByOIDCSubject(ctx context.Context, subject string) (*User, error) {
	if subject == "" {
		return nil, fmt.Errorf("empty OpenID Connect subject: %w", ErrNotFound)
	}
	return getOne(s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE oidc_subject = ?`, subject),
		scanUser, "OpenID Connect subject", strconv.Quote(subject))
}

// SetUserOIDCSubject links an existing user to an OpenID Connect subject, or unlinks them (an
// empty subject). An unknown user is ErrNotFound; a subject linked to another user ErrExists.
func (s *Access) SetUserOIDCSubject(ctx context.Context, name, subject string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE users SET oidc_subject = ? WHERE name = ?`, subject, name)
	if isUniqueViolation(err) {
		return fmt.Errorf("OpenID Connect subject %q is another user's: %w", subject, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("link user %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("user %s: %w", name, ErrNotFound)
	}
	return nil
}
