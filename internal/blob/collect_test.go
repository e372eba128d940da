package blob

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// age sets a blob's time to ago before now, as if it was written then and never asked for.
func age(t *testing.T, s *Store, hash string, ago time.Duration) {
	t.Helper()
	at := time.Now().Add(-ago)
	if err := os.Chtimes(s.Path(hash), at, at); err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, s *Store, b string) string {
	t.Helper()
	h, err := s.PutBytes([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Walk lists every blob with its size and time, not the temp files.
func TestWalk(t *testing.T) {
	s := newStore(t)
	a, b := put(t, s, "a"), put(t, s, "bb")
	if err := os.WriteFile(s.tmp+"/put-1", []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	if err := s.Walk(func(i Info) error { got[i.Hash] = i.Size; return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{a: 1, b: 2}, got); diff != "" {
		t.Errorf("Walk (-want +got):\n%s", diff)
	}
}

// A blob older than the cutoff is removed; a younger one stays, and so does an old one that Has
// (the server answering a client's question) said was stored: Has gives it a fresh time.
func TestRemoveIfOlder(t *testing.T) {
	s := newStore(t)
	old, young, asked := put(t, s, "old"), put(t, s, "young"), put(t, s, "asked")
	age(t, s, old, time.Hour)
	age(t, s, asked, time.Hour)
	if !s.Has(asked) {
		t.Fatal("Has(asked) = false")
	}
	cutoff := time.Now().Add(-MinGrace)
	for _, tt := range []struct {
		hash    string
		removed bool
	}{{old, true}, {young, false}, {asked, false}, {hashOf([]byte("never stored")), false}} {
		removed, size, err := s.RemoveIfOlder(tt.hash, cutoff)
		if err != nil || removed != tt.removed {
			t.Errorf("RemoveIfOlder(%s…) = %v, %v; want removed %v", tt.hash[:8], removed, err, tt.removed)
		}
		if removed && size != 3 {
			t.Errorf("RemoveIfOlder(old) freed %d bytes, want 3", size)
		}
		if s.Has(tt.hash) == tt.removed && tt.hash != hashOf([]byte("never stored")) {
			t.Errorf("after RemoveIfOlder(%s…): stored %v, want %v", tt.hash[:8], !tt.removed, !tt.removed)
		}
	}
	if n := checkStore(t, s); n != 2 {
		t.Errorf("%d blobs stored, want 2", n)
	}
}

// Has of a blob the collector is removing says it is missing (the client sends it again), or
// else the blob stays: a client is never told of a blob that then goes.
func TestHasAndRemoveRace(t *testing.T) {
	s := newStore(t)
	for i := range 200 {
		h := put(t, s, "blob "+string(rune('a'+i%26))+time.Now().String())
		age(t, s, h, time.Hour)
		done := make(chan bool)
		go func() { done <- s.Has(h) }()
		removed, _, err := s.RemoveIfOlder(h, time.Now().Add(-MinGrace))
		if err != nil {
			t.Fatal(err)
		}
		if said := <-done; said && removed {
			t.Fatalf("round %d: Has said the blob was stored and the collector removed it", i)
		}
	}
}
