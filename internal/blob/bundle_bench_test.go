package blob

import (
	"bytes"
	"crypto/rand"
	"testing"
)

// BenchmarkPutBundle10k stores a bundle of 10,000 1 KiB blobs (a typical code tree).
func BenchmarkPutBundle10k(b *testing.B) {
	blobs := make([][]byte, 10000)
	for i := range blobs {
		blobs[i] = make([]byte, 1024)
		_, _ = rand.Read(blobs[i])
	}
	var buf bytes.Buffer
	items := make([]BundleItem, len(blobs))
	for i, data := range blobs {
		items[i] = item(data)
	}
	if err := WriteBundle(&buf, items); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if n, _, err := s.PutBundle(bytes.NewReader(buf.Bytes())); err != nil || n != len(blobs) {
			b.Fatalf("PutBundle = %d, %v", n, err)
		}
	}
}
