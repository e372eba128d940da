package snapshot

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzDecodeMaterialize(f *testing.F) {
	x := sha("x")
	seeds := []string{
		`{"entries":[{"path":"a","type":"dir","mode":493},{"path":"a/f","type":"file","hash":"` + x + `","size":1,"mode":420}]}`,
		`{"entries":[{"path":"l","type":"symlink","target":"../outside","mode":511},{"path":"l/f","type":"file","hash":"` + x + `","size":1,"mode":420}]}`,
		`{"entries":[{"path":"a","type":"symlink","target":".","mode":511},{"path":"b","type":"symlink","target":"a/../outside","mode":511}]}`,
		`{"entries":[{"path":"d","type":"dir","mode":0},{"path":"d/e","type":"dir","mode":365},{"path":"d/e/f","type":"file","hash":"` + x + `","size":1,"mode":292}]}`,
		`{"entries":[{"path":"../outside/f","type":"file","hash":"` + x + `","size":1,"mode":420}]}`,
		`{"entries":[{"path":"f","type":"file","hash":"` + sha("") + `","mode":420},{"path":"g","type":"symlink","target":"f","mode":511}]}`,
	}
	if data, _, err := sample().Encode(); err == nil {
		seeds = append(seeds, string(data))
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	src := sourceOf("x", "a", "#!/bin/sh", "")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		base := t.TempDir()
		outside, dest := filepath.Join(base, "outside"), filepath.Join(base, "dest")
		if err := os.Mkdir(outside, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(outside, "sentinel"), []byte("s"), 0o644); err != nil {
			t.Fatal(err)
		}
		Materialize(t.Context(), m, src, dest, MaterializeOptions{Parallel: 2})
		defer makeRemovable(dest)
		checkConfined(t, base, outside, dest)
	})
}

// checkConfined fails if anything but dest changed under base, or if a
// symlink in dest resolves outside it.
func checkConfined(t *testing.T, base, outside, dest string) {
	t.Helper()
	des, _ := os.ReadDir(base)
	for _, de := range des {
		if de.Name() != "outside" && de.Name() != "dest" {
			t.Fatalf("wrote %s beside dest", de.Name())
		}
	}
	des, _ = os.ReadDir(outside)
	if len(des) != 1 || des[0].Name() != "sentinel" {
		t.Fatalf("wrote into outside: %v", des)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "sentinel")); string(b) != "s" {
		t.Fatal("sentinel changed")
	}
	realDest, err := filepath.EvalSymlinks(dest)
	if err != nil {
		return // dest not created: nothing to check
	}
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if r, err := filepath.EvalSymlinks(p); err == nil && r != realDest && !strings.HasPrefix(r, realDest+string(filepath.Separator)) {
			t.Fatalf("symlink %s resolves outside dest, to %s", p, r)
		}
		return nil
	})
}

// makeRemovable restores owner permissions on every directory under dir so
// t.TempDir can clean up after manifests with modes like 0.
func makeRemovable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o755) // before WalkDir reads it
		}
		return nil
	})
}
