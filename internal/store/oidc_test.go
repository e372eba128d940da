package store

import (
	"errors"
	"testing"
	"time"
)

// A user's OpenID Connect subject finds them after a reopen; a subject maps to one user only,
// and a user without one is never found by the empty subject.
func TestUserOIDCSubjectAcrossRestart(t *testing.T) {
	ctx := t.Context()
	path := testDSN(t)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	if err := s.CreateUserWithOIDC(ctx, User{Name: "rita", Role: "reader", CreatedAt: now}, "sub-rita"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUserWithOIDC(ctx, User{Name: "rob", Role: "owner", CreatedAt: now}, "sub-rita"); !errors.Is(err, ErrExists) {
		t.Fatalf("a second user with rita's subject: %v, want ErrExists", err)
	}
	for _, name := range []string{"carl", "dora"} { // two users without a subject
		if err := s.CreateUserWithOIDC(ctx, User{Name: name, Role: "reader", CreatedAt: now}, ""); err != nil {
			t.Fatalf("user %s without a subject: %v", name, err)
		}
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.UserByOIDCSubject(ctx, "sub-rita")
	if err != nil || u.Name != "rita" || u.Role != "reader" {
		t.Fatalf("user of sub-rita: %+v, %v; want rita, reader", u, err)
	}
	for _, sub := range []string{"", "sub-unknown"} {
		if u, err := s.UserByOIDCSubject(ctx, sub); !errors.Is(err, ErrNotFound) {
			t.Errorf("user of subject %q: %+v, %v; want ErrNotFound", sub, u, err)
		}
	}
	if _, err := s.GetUser(ctx, "rob"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rob, refused for a taken subject, exists: %v", err)
	}
}
