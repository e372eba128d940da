package blob

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func item(data []byte) BundleItem {
	return BundleItem{
		Hash: hashOf(data),
		Size: int64(len(data)),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
	}
}

func bundleOf(t testing.TB, blobs ...[]byte) []byte {
	t.Helper()
	var items []BundleItem
	for _, b := range blobs {
		items = append(items, item(b))
	}
	var buf bytes.Buffer
	if err := WriteBundle(&buf, items); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBundleRoundTrip(t *testing.T) {
	blobs := [][]byte{[]byte("one"), nil, bytes.Repeat([]byte("x"), 1<<20), []byte("one")}
	s := newStore(t)
	count, n, err := s.PutBundle(bytes.NewReader(bundleOf(t, blobs...)))
	if err != nil {
		t.Fatal(err)
	}
	if count != 4 || n != 3+1<<20+3 {
		t.Fatalf("PutBundle = %d blobs, %d bytes", count, n)
	}
	for _, b := range blobs {
		if !s.Has(hashOf(b)) {
			t.Errorf("blob %q... missing", b[:min(len(b), 8)])
		}
	}
	if got := checkStore(t, s); got != 3 {
		t.Fatalf("%d blobs stored, want 3", got)
	}
	// An empty bundle is valid.
	if count, _, err := s.PutBundle(bytes.NewReader(bundleOf(t))); err != nil || count != 0 {
		t.Fatalf("empty bundle = %d, %v", count, err)
	}
}

// rawTar builds a tar stream by hand, for bundles WriteBundle would refuse.
func rawTar(t testing.TB, entries ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		body := strings.Repeat("z", int(h.Size))
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPutBundleRejects(t *testing.T) {
	good := []byte("good")
	valid := bundleOf(t, good, []byte("second"))
	zHash := hashOf([]byte("zz"))
	tests := []struct {
		name      string
		data      []byte
		wantCount int
		wantErr   error
	}{
		{"bad name", rawTar(t, tar.Header{Name: "../x", Size: 2}), 0, ErrInvalidHash},
		{"uppercase name", rawTar(t, tar.Header{Name: strings.ToUpper(zHash), Size: 2}), 0, ErrInvalidHash},
		{"wrong content", rawTar(t, tar.Header{Name: hashOf(good), Size: 2}), 0, ErrHashMismatch},
		{"good then wrong", append(bundleOf(t, good)[:1024], rawTar(t, tar.Header{Name: hashOf([]byte("q")), Size: 2})...), 1, ErrHashMismatch},
		{"directory", rawTar(t, tar.Header{Name: zHash, Typeflag: tar.TypeDir, Mode: 0o755}), 0, nil},
		{"symlink", rawTar(t, tar.Header{Name: zHash, Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}), 0, nil},
		{"truncated in content", valid[:512+2], 0, io.ErrUnexpectedEOF},
		{"truncated at entry boundary", valid[:1024], 1, io.ErrUnexpectedEOF},
		{"missing second zero block", valid[:len(valid)-512], 2, io.ErrUnexpectedEOF},
		{"empty stream", nil, 0, io.ErrUnexpectedEOF},
		{"garbage", bytes.Repeat([]byte("garbage!"), 100), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			count, _, err := s.PutBundle(bytes.NewReader(tt.data))
			if err == nil {
				t.Fatal("PutBundle accepted a malformed bundle")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if count != tt.wantCount {
				t.Errorf("count = %d, want %d", count, tt.wantCount)
			}
			if n := checkStore(t, s); n != tt.wantCount {
				t.Errorf("%d blobs stored, want %d", n, tt.wantCount)
			}
		})
	}
}

func TestWriteBundleErrors(t *testing.T) {
	data := []byte("abc")
	tests := []struct {
		name string
		it   BundleItem
	}{
		{"invalid hash", BundleItem{Hash: "x", Size: 3, Open: item(data).Open}},
		{"short", BundleItem{Hash: hashOf(data), Size: 4, Open: item(data).Open}},
		{"long", BundleItem{Hash: hashOf(data), Size: 2, Open: item(data).Open}},
		{"open fails", BundleItem{Hash: hashOf(data), Size: 3, Open: func() (io.ReadCloser, error) {
			return nil, fmt.Errorf("nope")
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := WriteBundle(io.Discard, []BundleItem{tt.it}); err == nil {
				t.Fatal("WriteBundle succeeded")
			}
		})
	}
}

func FuzzPutBundle(f *testing.F) {
	f.Add(bundleOf(f, []byte("a"), []byte("bb")))
	f.Add(bundleOf(f))
	f.Add(rawTar(f, tar.Header{Name: hashOf([]byte("zz")), Size: 2}))
	f.Add(rawTar(f, tar.Header{Name: hashOf([]byte("zz")), Size: 3}))
	f.Add(rawTar(f, tar.Header{Name: "../x", Size: 2}))
	f.Add([]byte{})
	s := newStore(f) // one store per worker, emptied after each input
	f.Fuzz(func(t *testing.T, data []byte) {
		defer emptyStore(t, s)
		count, stored, _ := s.PutBundle(bytes.NewReader(data))
		if n := checkStore(t, s); n > count {
			t.Fatalf("%d blobs stored, PutBundle reported %d", n, count)
		}
		// No expansion: a bundle stores at most what it carries (sparse entries are refused).
		if stored > int64(len(data)) {
			t.Fatalf("a bundle of %d bytes stored %d bytes", len(data), stored)
		}
	})
}

func emptyStore(t testing.TB, s *Store) {
	t.Helper()
	des, err := os.ReadDir(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() != "tmp" {
			if err := os.RemoveAll(filepath.Join(s.Dir(), de.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}
