package blob

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkStore fails unless every stored blob matches its name and tmp is empty.
func checkStore(t testing.TB, s *Store) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(s.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(s.Dir(), p)
		if strings.HasPrefix(rel, "tmp"+string(filepath.Separator)) {
			t.Errorf("leftover temp file %s", rel)
			return nil
		}
		h, _, err := HashFile(p)
		if err != nil {
			return err
		}
		if p != s.Path(h) {
			t.Errorf("blob at %s hashes to %s", rel, h)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestValidHash(t *testing.T) {
	good := hashOf([]byte("x"))
	tests := []struct {
		in   string
		want bool
	}{
		{good, true},
		{strings.ToUpper(good), false},
		{good[:63], false},
		{good + "0", false},
		{"", false},
		{strings.Repeat("g", 64), false},
		{"../" + good[3:], false},
	}
	for _, tt := range tests {
		if got := ValidHash(tt.in); got != tt.want {
			t.Errorf("ValidHash(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestPutOpenStat(t *testing.T) {
	s := newStore(t)
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"small", []byte("hello")},
		{"multi-buffer", bytes.Repeat([]byte("0123456789"), 100_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := hashOf(tt.data)
			h, n, err := s.Put(bytes.NewReader(tt.data), "")
			if err != nil || h != want || n != int64(len(tt.data)) {
				t.Fatalf("Put = %s, %d, %v; want %s, %d", h, n, err, want, len(tt.data))
			}
			if !s.Has(h) {
				t.Fatal("Has = false after Put")
			}
			size, err := s.Stat(h)
			if err != nil || size != int64(len(tt.data)) {
				t.Fatalf("Stat = %d, %v", size, err)
			}
			f, err := s.Open(h)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, _ := io.ReadAll(f)
			if !bytes.Equal(got, tt.data) {
				t.Fatal("content differs")
			}
			// Idempotent, with and without want.
			if h2, err := s.PutBytes(tt.data); err != nil || h2 != h {
				t.Fatalf("PutBytes again = %s, %v", h2, err)
			}
			if _, _, err := s.Put(bytes.NewReader(tt.data), h); err != nil {
				t.Fatalf("Put with want again: %v", err)
			}
		})
	}
	checkStore(t, s)
}

func TestPutFile(t *testing.T) {
	s := newStore(t)
	p := filepath.Join(t.TempDir(), "f")
	data := []byte("file content")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	h, n, err := s.PutFile(p)
	if err != nil || h != hashOf(data) || n != int64(len(data)) {
		t.Fatalf("PutFile = %s, %d, %v", h, n, err)
	}
	if hf, nf, err := HashFile(p); err != nil || hf != h || nf != n {
		t.Fatalf("HashFile = %s, %d, %v", hf, nf, err)
	}
	if _, _, err := s.PutFile(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("PutFile missing = %v", err)
	}
}

func TestPutMismatchStoresNothing(t *testing.T) {
	s := newStore(t)
	other := hashOf([]byte("other"))
	tests := []struct {
		name string
		want string
		err  error
	}{
		{"wrong hash", other, ErrHashMismatch},
		{"invalid hash", "abc", ErrInvalidHash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.Put(strings.NewReader("content"), tt.want)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Put = %v, want %v", err, tt.err)
			}
			if n := checkStore(t, s); n != 0 {
				t.Fatalf("%d blobs stored after a mismatch", n)
			}
		})
	}
	// Mismatch against an already stored blob leaves it intact.
	h, _ := s.PutBytes([]byte("other"))
	if _, _, err := s.Put(strings.NewReader("evil"), h); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("Put over existing = %v", err)
	}
	checkStore(t, s)
}

func TestPutReadError(t *testing.T) {
	s := newStore(t)
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("partial"), errReader{boom})
	if _, _, err := s.Put(r, ""); !errors.Is(err, boom) {
		t.Fatalf("Put = %v, want boom", err)
	}
	if n := checkStore(t, s); n != 0 {
		t.Fatalf("%d blobs stored after a read error", n)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestNotFound(t *testing.T) {
	s := newStore(t)
	h := hashOf([]byte("absent"))
	if _, err := s.Open(h); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open = %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(h); !errors.Is(err, ErrNotFound) {
		t.Errorf("Stat = %v, want ErrNotFound", err)
	}
	if _, err := s.Open("../../etc/passwd"); !errors.Is(err, ErrInvalidHash) {
		t.Errorf("Open invalid = %v, want ErrInvalidHash", err)
	}
	if p := s.Path("nope"); p != "" {
		t.Errorf("Path invalid = %q, want empty", p)
	}
}

func TestMissing(t *testing.T) {
	s := newStore(t)
	a, _ := s.PutBytes([]byte("a"))
	b, c := hashOf([]byte("b")), hashOf([]byte("c"))
	got := s.Missing([]string{c, a, b, c, "bad", a, b})
	if diff := cmp.Diff([]string{c, b, "bad"}, got); diff != "" {
		t.Fatalf("Missing (-want +got):\n%s", diff)
	}
	if got := s.Missing(nil); got == nil || len(got) != 0 {
		t.Fatalf("Missing(nil) = %#v, want empty", got)
	}
}

func TestConcurrentPut(t *testing.T) {
	s := newStore(t)
	const writers, distinct = 32, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*2)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			same := bytes.Repeat([]byte("same"), 50_000)
			if _, _, err := s.Put(bytes.NewReader(same), hashOf(same)); err != nil {
				errs <- err
			}
			own := []byte(fmt.Sprintf("blob %d", i%distinct))
			if _, err := s.PutBytes(own); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := checkStore(t, s); n != 1+distinct {
		t.Fatalf("%d blobs stored, want %d", n, 1+distinct)
	}
}
