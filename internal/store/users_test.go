package store

import (
	"errors"
	"testing"
	"time"
)

// Users, tokens and audit entries survive a reopen; revocation and deletion stick.
func TestUsersTokensAuditAcrossRestart(t *testing.T) {
	ctx := t.Context()
	path := testDSN(t)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	if err := s.Access.CreateUser(ctx, User{Name: "rita", Role: "reader", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.Access.CreateUser(ctx, User{Name: "rita", Role: "owner", CreatedAt: now}); !errors.Is(err, ErrExists) {
		t.Fatalf("second rita: %v, want ErrExists", err)
	}
	tok := UserToken{User: "rita", Name: "laptop", Hash: "h1", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := s.Access.CreateUserToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := s.Access.TouchUserToken(ctx, "h1", now.Add(time.Minute), now); err != nil {
		t.Fatal(err)
	}
	if err := s.Access.RevokeUserToken(ctx, "rita", "laptop", now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.Access.RevokeUserToken(ctx, "rita", "laptop", now.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for i, action := range []string{"user.create", "token.revoke"} {
		if err := s.Access.AddAudit(ctx, AuditEntry{At: now.Add(time.Duration(i) * time.Hour), User: "admin", Action: action, Object: "users/rita"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Access.UserTokenByHash(ctx, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.RevokedAt.Equal(now.Add(2*time.Minute)) || !got.LastUsedAt.Equal(now.Add(time.Minute)) {
		t.Errorf("token after reopen: revoked %v, last used %v", got.RevokedAt, got.LastUsedAt)
	}
	admin, err := s.Access.GetUser(ctx, "admin")
	if err != nil || admin.Role != "owner" {
		t.Errorf("the bootstrap owner: %+v, %v", admin, err)
	}
	if es, err := s.Access.Audit(ctx, AuditFilter{Since: now.Add(30 * time.Minute)}); err != nil || len(es) != 1 || es[0].Action != "token.revoke" {
		t.Errorf("audit since: %+v, %v", es, err)
	}
	if es, err := s.Access.Audit(ctx, AuditFilter{User: "rita"}); err != nil || len(es) != 0 {
		t.Errorf("audit of rita: %+v, %v", es, err)
	}
	if err := s.Access.DeleteUser(ctx, "rita"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Access.UserTokenByHash(ctx, "h1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a deleted user's token: %v, want ErrNotFound", err)
	}
}
