package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
)

// copyBufSize is the size of the buffers used to stream blobs; memory use
// per transfer is bounded by it, whatever the size of the blob.
const copyBufSize = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// ValidHash reports whether h is a lowercase hex SHA-256 (64 characters).
func ValidHash(h string) bool {
	if len(h) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// HashReader reads r to the end and returns the hex SHA-256 of what it read
// and how many bytes that was.
func HashReader(r io.Reader) (hash string, size int64, err error) {
	h := sha256.New()
	n, err := copyBuffered(h, r)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// HashFile returns the hex SHA-256 and size of the file at path.
func HashFile(path string) (hash string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("hash file: %w", err)
	}
	defer f.Close()
	hash, size, err = HashReader(f)
	if err != nil {
		return "", 0, fmt.Errorf("hash file %s: %w", path, err)
	}
	return hash, size, nil
}

// copyHashed copies r to w and returns the hex SHA-256 of the bytes copied.
func copyHashed(w io.Writer, r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := copyBuffered(io.MultiWriter(w, h), r)
	if err != nil {
		return "", n, err
	}
	return sum(h), n, nil
}

func sum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// copyBuffered is io.Copy with a pooled buffer. It hides WriterTo and
// ReaderFrom so the pooled buffer is always the one used.
func copyBuffered(w io.Writer, r io.Reader) (int64, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	return io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{r}, *bp)
}
