package home

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/store"
)

var testNow = time.Date(2026, 11, 23, 21, 0, 0, 0, time.UTC)

// populated makes a workspace with a database (open, as under a running server), blobs and key files.
func populated(t *testing.T) (Home, *store.Store, []string) {
	t.Helper()
	h := newHome(t)
	st, err := h.OpenStore(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.SetSetting(t.Context(), "marker", "before the backup"); err != nil {
		t.Fatal(err)
	}
	bs, err := blob.Open(h.Blobs())
	if err != nil {
		t.Fatal(err)
	}
	var hashes []string
	for _, s := range []string{"one", "two", strings.Repeat("three", 1000)} {
		hash, err := bs.PutBytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hash)
	}
	writeFile(t, h.SecretKeyFile(), "the key\n")
	writeFile(t, h.TokenFile(), "the token\n")
	return h, st, hashes
}

func TestBackupAndRestoreIntoANewDirectory(t *testing.T) {
	h, st, hashes := populated(t)
	dest := filepath.Join(t.TempDir(), "backups", "b1")
	info, err := h.Backup(t.Context(), dest, testNow)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	// Written after the backup: not in it.
	if err := st.SetSetting(t.Context(), "marker", "after the backup"); err != nil {
		t.Fatal(err)
	}
	if info.Blobs != 3 || info.SchemaVersion != store.LatestSchema() || info.DatabaseBytes == 0 ||
		!cmp.Equal(info.Files, []string{"secret.key", "token"}) {
		t.Errorf("backup info %+v", info)
	}
	if read, err := ReadBackupInfo(dest); err != nil || !cmp.Equal(read, info) {
		t.Errorf("ReadBackupInfo = %+v, %v; want %+v", read, err, info)
	}
	checkPrivate(t, dest)

	target := Home{Dir: filepath.Join(t.TempDir(), "restored")}
	ri, err := target.Restore(t.Context(), dest, false, testNow)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if ri.Blobs != 3 || ri.BlobsCopied != 3 || len(ri.MovedAside) != 0 ||
		!cmp.Equal(ri.Files, []string{"workspace.db", "secret.key", "token"}) {
		t.Errorf("restore info %+v", ri)
	}
	rst, err := target.OpenStore(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rst.Close()
	if v, _, err := rst.Setting(t.Context(), "marker"); err != nil || v != "before the backup" {
		t.Errorf("restored marker = %q, %v", v, err)
	}
	bs, err := blob.Open(target.Blobs())
	if err != nil {
		t.Fatal(err)
	}
	if missing := bs.Missing(hashes); len(missing) != 0 {
		t.Errorf("blobs missing after restore: %v", missing)
	}
	for _, name := range []string{"secret.key", "token"} {
		if got := readString(t, filepath.Join(target.Dir, name)); got != readString(t, filepath.Join(h.Dir, name)) {
			t.Errorf("restored %s = %q", name, got)
		}
		if m := mode(t, filepath.Join(target.Dir, name)); m != 0o600 {
			t.Errorf("restored %s mode %o, want 600", name, m)
		}
	}
}

// checkPrivate checks that no one else can read into the backup.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("backup directory mode %o, want 700", m)
	}
	for _, name := range []string{"workspace.db", "secret.key", "token", "backup.json"} {
		if m := mode(t, filepath.Join(dir, name)); m != 0o600 {
			t.Errorf("%s mode %o, want 600", name, m)
		}
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBackupRefuses(t *testing.T) {
	h, _, _ := populated(t)
	full := t.TempDir()
	writeFile(t, filepath.Join(full, "something"), "x")
	if _, err := h.Backup(t.Context(), full, testNow); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Backup into a non-empty directory = %v", err)
	}
	if _, err := newHome(t).Backup(t.Context(), filepath.Join(t.TempDir(), "b"), testNow); err == nil || !strings.Contains(err.Error(), "no workspace database") {
		t.Errorf("Backup of a workspace without a database = %v", err)
	}
}

func TestBackupFindsADamagedBlob(t *testing.T) {
	h, _, hashes := populated(t)
	p := filepath.Join(h.Blobs(), hashes[0][:2], hashes[0])
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, "not what it was")
	_, err := h.Backup(t.Context(), filepath.Join(t.TempDir(), "b"), testNow)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Backup with a damaged blob = %v, want an error naming it", err)
	}
}

func TestRestoreRefusesARunningWorkspace(t *testing.T) {
	h, _, _ := populated(t)
	dest := filepath.Join(t.TempDir(), "b")
	if _, err := h.Backup(t.Context(), dest, testNow); err != nil {
		t.Fatal(err)
	}
	release, err := h.Lock() // as the server does
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	before := readString(t, h.DB())
	_, err = h.Restore(t.Context(), dest, true, testNow)
	if err == nil || !strings.Contains(err.Error(), "already running") || !strings.Contains(err.Error(), "hangar server stop") {
		t.Fatalf("Restore into a running workspace = %v", err)
	}
	if readString(t, h.DB()) != before {
		t.Error("Restore changed the database of a running workspace")
	}
}

func TestRestoreOverAStoppedWorkspace(t *testing.T) {
	h, st, _ := populated(t)
	dest := filepath.Join(t.TempDir(), "b")
	if _, err := h.Backup(t.Context(), dest, testNow); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSetting(t.Context(), "marker", "after the backup"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	writeFile(t, h.DB()+"-wal", "a stale WAL") // must not be replayed into the restored database
	writeFile(t, h.TokenFile(), "a newer token\n")

	if _, err := h.Restore(t.Context(), dest, false, testNow); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Restore over a database without --force = %v, want a refusal naming --force", err)
	}
	ri, err := h.Restore(t.Context(), dest, true, testNow)
	if err != nil {
		t.Fatalf("Restore --force: %v", err)
	}
	suffix := ".before-restore-20261123T210000Z"
	wantMoved := []string{"token" + suffix, "workspace.db" + suffix, "workspace.db-wal" + suffix}
	if diff := cmp.Diff(wantMoved, ri.MovedAside); diff != "" {
		t.Errorf("moved aside (-want +got):\n%s", diff)
	}
	for _, name := range wantMoved {
		if _, err := os.Stat(filepath.Join(h.Dir, name)); err != nil {
			t.Errorf("%s was not kept: %v", name, err)
		}
	}
	if _, err := os.Stat(h.DB() + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale WAL is still beside the restored database: %v", err)
	}
	if got := readString(t, h.TokenFile()); got != "the token\n" {
		t.Errorf("token = %q, want the backup's", got)
	}
	rst, err := h.OpenStore(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rst.Close()
	if v, _, _ := rst.Setting(t.Context(), "marker"); v != "before the backup" {
		t.Errorf("marker = %q, want the backup's", v)
	}
}

func TestRestoreRefusesWhatIsNotABackup(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	if _, err := h.Restore(t.Context(), dir, false, testNow); err == nil || !strings.Contains(err.Error(), "backup.json") {
		t.Errorf("Restore from a plain directory = %v", err)
	}
	src, _, _ := populated(t)
	dest := filepath.Join(t.TempDir(), "b")
	if _, err := src.Backup(t.Context(), dest, testNow); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dest, "workspace.db"), strings.Repeat("garbage ", 30))
	_, err := h.Restore(t.Context(), dest, false, testNow)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dest, "workspace.db")) {
		t.Errorf("Restore of a damaged backup = %v, want an error naming its database", err)
	}
	if _, err := os.Stat(h.DB()); !errors.Is(err, fs.ErrNotExist) {
		t.Error("Restore of a damaged backup wrote a database")
	}
}
