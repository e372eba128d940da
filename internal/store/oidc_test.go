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
	if err := s.Access.CreateUserWithOIDC(ctx, User{Name: "rita", Role: "reader", CreatedAt: now}, "sub-rita"); err != nil {
		t.Fatal(err)
	}
	if err := s.Access.CreateUserWithOIDC(ctx, User{Name: "rob", Role: "owner", CreatedAt: now}, "sub-rita"); !errors.Is(err, ErrExists) {
		t.Fatalf("a second user with rita's subject: %v, want ErrExists", err)
	}
	for _, name := range []string{"carl", "dora"} { // two users without a subject
		if err := s.Access.CreateUserWithOIDC(ctx, User{Name: name, Role: "reader", CreatedAt: now}, ""); err != nil {
			t.Fatalf("user %s without a subject: %v", name, err)
		}
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.Access.UserByOIDCSubject(ctx, "sub-rita")
	if err != nil || u.Name != "rita" || u.Role != "reader" {
		t.Fatalf("user of sub-rita: %+v, %v; want rita, reader", u, err)
	}
	for _, sub := range []string{"", "sub-unknown"} {
		if u, err := s.Access.UserByOIDCSubject(ctx, sub); !errors.Is(err, ErrNotFound) {
			t.Errorf("user of subject %q: %+v, %v; want ErrNotFound", sub, u, err)
		}
	}
	if _, err := s.Access.GetUser(ctx, "rob"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rob, refused for a taken subject, exists: %v", err)
	}
}

// An existing user is linked, moved to another subject and unlinked; a subject another user
// holds, and an unknown user, are refused.
func TestSetUserOIDCSubject(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Unix(1_800_000_000, 0).UTC()
	for _, u := range []struct{ name, sub string }{{"rita", ""}, {"carl", "sub-carl"}} {
		if err := s.Access.CreateUserWithOIDC(ctx, User{Name: u.name, Role: "reader", CreatedAt: now}, u.sub); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name, sub string
		want      error
	}{
		{"rita", "sub-rita", nil},
		{"rita", "sub-rita-2", nil},
		{"rita", "sub-carl", ErrExists},
		{"nobody", "sub-x", ErrNotFound},
	}
	for _, st := range steps {
		if err := s.Access.SetUserOIDCSubject(ctx, st.name, st.sub); !errors.Is(err, st.want) && !(err == nil && st.want == nil) {
			t.Fatalf("SetUserOIDCSubject(%s, %s) = %v, want %v", st.name, st.sub, err, st.want)
		}
	}
	if u, err := s.Access.UserByOIDCSubject(ctx, "sub-rita-2"); err != nil || u.Name != "rita" || u.OIDCSubject != "sub-rita-2" {
		t.Fatalf("user of sub-rita-2: %+v, %v", u, err)
	}
	if _, err := s.Access.UserByOIDCSubject(ctx, "sub-rita"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rita's first subject still finds a user: %v", err)
	}
	if err := s.Access.SetUserOIDCSubject(ctx, "rita", ""); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Access.GetUser(ctx, "rita"); err != nil || u.OIDCSubject != "" {
		t.Errorf("rita after unlinking: %+v, %v", u, err)
	}
	if u, err := s.Access.GetUser(ctx, "carl"); err != nil || u.OIDCSubject != "sub-carl" {
		t.Errorf("carl: %+v, %v; want his subject kept", u, err)
	}
}
