package home

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/blob"
)

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOpenStoreRefusesALostDatabase(t *testing.T) {
	traces := []struct {
		name string
		make func(t *testing.T, h Home)
		want string
	}{
		{"secret.key", func(t *testing.T, h Home) { writeFile(t, h.SecretKeyFile(), "k") }, "secret.key"},
		{"token", func(t *testing.T, h Home) { writeFile(t, h.TokenFile(), "t") }, "token"},
		{"server.json", func(t *testing.T, h Home) { writeFile(t, h.ServerFile(), "{}") }, "server.json"},
		{"WAL", func(t *testing.T, h Home) { writeFile(t, h.DB()+"-wal", "w") }, "workspace.db-wal"},
		{"SHM", func(t *testing.T, h Home) { writeFile(t, h.DB()+"-shm", "s") }, "workspace.db-shm"},
		{"blobs", func(t *testing.T, h Home) {
			bs, err := blob.Open(h.Blobs())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"a", "b"} {
				if _, err := bs.PutBytes([]byte(s)); err != nil {
					t.Fatal(err)
				}
			}
		}, "blobs/ with 2 blobs"},
		{"run directories", func(t *testing.T, h Home) {
			writeFile(t, filepath.Join(h.LocalRoot(), "runs", "r1", "handle.json"), "{}")
		},
			"local/runs/ with 1 run directory"},
		{"slurm", func(t *testing.T, h Home) { writeFile(t, filepath.Join(h.SlurmRoot(), "r1", "job.sh"), "") }, "slurm/ with 1 entry"},
	}
	for _, db := range []struct {
		name, state string
		make        func(t *testing.T, h Home)
	}{
		{"missing", "is missing", func(*testing.T, Home) {}},
		{"empty", "is empty (0 bytes)", func(t *testing.T, h Home) { writeFile(t, h.DB(), "") }},
	} {
		for _, tr := range traces {
			t.Run(db.name+"/"+tr.name, func(t *testing.T) {
				h := newHome(t)
				db.make(t, h)
				tr.make(t, h)
				st, err := h.OpenStore(t.Context())
				if err == nil {
					st.Close()
					t.Fatal("OpenStore started an empty workspace over a lost database")
				}
				var lost *LostDatabaseError
				if !errors.As(err, &lost) {
					t.Fatalf("OpenStore = %v, want a LostDatabaseError", err)
				}
				msg := err.Error()
				for _, want := range []string{h.DB(), db.state, tr.want, "hangar workspace restore", "move " + h.Dir + " away"} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not say %q", msg, want)
					}
				}
				if fi, err := os.Stat(h.DB()); err == nil && fi.Size() != 0 {
					t.Error("OpenStore wrote a database")
				}
			})
		}
	}
}

func TestOpenStoreStartsANewWorkspace(t *testing.T) {
	h := newHome(t)
	// What the CLI makes before the first server starts is no sign of data.
	writeFile(t, h.LogFile(), "")
	writeFile(t, h.startLock(), "")
	writeFile(t, h.lockFile(), "")
	writeFile(t, filepath.Join(h.CacheDir(), "file-hashes.json"), "{}")
	st, err := h.OpenStore(t.Context())
	if err != nil {
		t.Fatalf("OpenStore of a new workspace: %v", err)
	}
	st.Close()
	// The second start finds the database it made.
	writeFile(t, h.SecretKeyFile(), "k")
	st, err = h.OpenStore(t.Context())
	if err != nil {
		t.Fatalf("OpenStore of an existing workspace: %v", err)
	}
	st.Close()
}

func TestOpenStoreRefusesADamagedDatabase(t *testing.T) {
	h := newHome(t)
	writeFile(t, h.DB(), strings.Repeat("not sqlite ", 20))
	_, err := h.OpenStore(t.Context())
	var u *UnusableDatabaseError
	if !errors.As(err, &u) {
		t.Fatalf("OpenStore = %v, want an UnusableDatabaseError", err)
	}
	for _, want := range []string{h.DB(), "not a SQLite database", "hangar workspace restore", "move " + h.Dir + " away"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// fakeServer writes an executable that behaves as a `hangar server` failing at start.
func fakeServer(t *testing.T, script string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "hangar")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestConnectReportsAServerThatFailsAtStart(t *testing.T) {
	h := newHome(t)
	writeFile(t, h.LogFile(), "Error: an older failure\n")
	exe := fakeServer(t, `echo 'time=2026-01-01 level=INFO msg="opening the store"'
echo "Error: workspace database $3/workspace.db is not a SQLite database" >&2
exit 1
`)
	_, _, err := h.Connect(t.Context(), exe, nil)
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("Connect = %v, want a StartError", err)
	}
	want := "workspace database " + h.DB() + " is not a SQLite database"
	if se.Msg != want {
		t.Errorf("Msg = %q, want the server's own error %q", se.Msg, want)
	}
	if !strings.Contains(err.Error(), h.LogFile()) {
		t.Errorf("error %q does not name the log", err)
	}
}

func TestConnectReportsAServerThatExitsSilently(t *testing.T) {
	h := newHome(t)
	_, _, err := h.Connect(t.Context(), fakeServer(t, "exit 3\n"), nil)
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "exit status 3") {
		t.Fatalf("Connect = %v, want a StartError saying how it exited", err)
	}
}

func TestLastError(t *testing.T) {
	tests := []struct{ out, want string }{
		{"a\nError: boom\nb\n", "boom"},
		{"Error: first\nError: second\n", "second"},
		{"level=ERROR msg=x\n", "level=ERROR msg=x"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := lastError(tt.out); got != tt.want {
			t.Errorf("lastError(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		n         int
		one, want string
	}{{1, "blob", "1 blob"}, {2, "blob", "2 blobs"}, {3, "run directory", "3 run directories"}, {1, "entry", "1 entry"}}
	for _, tt := range tests {
		if got := count(tt.n, tt.one); got != tt.want {
			t.Errorf("count(%d, %q) = %q, want %q", tt.n, tt.one, got, tt.want)
		}
	}
}
