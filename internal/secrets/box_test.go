package secrets

import (
	"os"
	"path/filepath"
	"testing"
)

func mustOpen(t *testing.T, path string) *Box {
	t.Helper()
	b, err := OpenBox(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustOpenWith(t *testing.T, b *Box, ct string, want string) {
	t.Helper()
	got, err := b.Decrypt(ct)
	if err != nil || string(got) != want {
		t.Fatalf("decrypt = %q, %v; want %q", got, err, want)
	}
}

// A rotation interrupted at any step leaves every value readable by a box opened afresh (a
// restarted server), and committing it leaves one key file that opens the resealed values only.
func TestBoxRotationSurvivesACrashAtEveryStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	b := mustOpen(t, path)
	old, err := b.Encrypt([]byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.BeginRotation(); err != nil {
		t.Fatal(err)
	}
	if b.Current(old) {
		t.Fatal("a value sealed before the rotation counts as current")
	}
	sealedNew, _ := b.Encrypt([]byte("v2"))
	if !b.Current(sealedNew) {
		t.Fatal("a value sealed during the rotation is not under the new key")
	}
	// Crash after Begin: a new box holds both keys and knows the rotation is under way.
	b2 := mustOpen(t, path)
	if !b2.Rotating() {
		t.Fatal("reopened box does not see the rotation begun")
	}
	mustOpenWith(t, b2, old, "v1")
	mustOpenWith(t, b2, sealedNew, "v2")
	if err := b2.BeginRotation(); err != nil { // resumed, with the same key
		t.Fatal(err)
	}
	if !b2.Current(sealedNew) {
		t.Fatal("a resumed rotation made another key")
	}
	if err := b2.CommitRotation(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".new"); !os.IsNotExist(err) {
		t.Fatalf("the rotation's key file is still there: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file after commit: %v, %v", fi, err)
	}
	b3 := mustOpen(t, path)
	if b3.Rotating() {
		t.Fatal("committed rotation still under way")
	}
	mustOpenWith(t, b3, sealedNew, "v2")
	if _, err := b3.Decrypt(old); err == nil {
		t.Fatal("the old key still opens values after the rotation was committed")
	}
}

func TestBoxCommitWithoutRotationFails(t *testing.T) {
	b := mustOpen(t, filepath.Join(t.TempDir(), "secret.key"))
	if err := b.CommitRotation(); err == nil {
		t.Fatal("commit without a rotation succeeded")
	}
}
