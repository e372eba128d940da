package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"runtime"
	"testing"
)

// patternReader yields n bytes of a deterministic pattern without holding
// them in memory.
type patternReader struct {
	n, off int64
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for i := range b {
		x := p.off + int64(i)
		b[i] = byte(x ^ x>>8 ^ x>>16)
	}
	p.off += int64(len(b))
	return len(b), nil
}

func TestPutLargeStreaming(t *testing.T) {
	const size = 300 << 20
	want := func() string {
		h := sha256.New()
		if _, err := io.Copy(h, &patternReader{n: size}); err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(h.Sum(nil))
	}()
	s := newStore(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h, n, err := s.Put(&patternReader{n: size}, want)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if h != want || n != size {
		t.Fatalf("Put = %s, %d; want %s, %d", h, n, want, size)
	}
	// Streaming: allocations stay far below the blob size.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("Put allocated %d MiB for a %d MiB blob", alloc>>20, size>>20)
	}
	got, gotSize, err := HashFile(s.Path(h))
	if err != nil || got != want || gotSize != size {
		t.Fatalf("stored blob hashes to %s, %d, %v", got, gotSize, err)
	}
}
