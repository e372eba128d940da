package blob

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// BundleItem is one blob to send in a bundle. Open is called once, when the
// item is written; Size must be the exact size of what it yields.
type BundleItem struct {
	Hash string
	Open func() (io.ReadCloser, error)
	Size int64
}

// WriteBundle writes items to w as a bundle: a tar stream with one regular
// file per blob, named by its hash. Blobs are streamed, not buffered.
func WriteBundle(w io.Writer, items []BundleItem) error {
	tw := tar.NewWriter(w)
	for _, it := range items {
		if err := writeItem(tw, it); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	return nil
}

func writeItem(tw *tar.Writer, it BundleItem) error {
	if !ValidHash(it.Hash) {
		return fmt.Errorf("bundle blob %q: %w", it.Hash, ErrInvalidHash)
	}
	if it.Size < 0 {
		return fmt.Errorf("bundle blob %s: negative size %d", it.Hash, it.Size)
	}
	rc, err := it.Open()
	if err != nil {
		return fmt.Errorf("bundle blob %s: %w", it.Hash, err)
	}
	defer rc.Close()
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     it.Hash,
		Size:     it.Size,
		Mode:     0o444,
		ModTime:  time.Unix(0, 0),
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("bundle blob %s: %w", it.Hash, err)
	}
	n, err := copyBuffered(tw, io.LimitReader(rc, it.Size))
	if err != nil {
		return fmt.Errorf("bundle blob %s: %w", it.Hash, err)
	}
	if n != it.Size {
		return fmt.Errorf("bundle blob %s: got %d bytes, want %d", it.Hash, n, it.Size)
	}
	var one [1]byte
	if k, _ := io.ReadFull(rc, one[:]); k > 0 {
		return fmt.Errorf("bundle blob %s: longer than %d bytes", it.Hash, it.Size)
	}
	return nil
}

// PutBundle stores every blob in the bundle read from r, verifying each
// entry's content against its name. It stops at the first bad entry (a name
// that is not a valid hash, an entry that is not a regular file, content
// that does not match, a truncated stream); blobs verified before it stay
// stored. count and bytes tell what was stored.
func (s *Store) PutBundle(r io.Reader) (count int, bytes int64, err error) {
	var done []pending
	defer func() {
		// Blobs verified before an error stay stored, as documented.
		if cerr := s.commit(done); cerr != nil && err == nil {
			count, bytes, err = 0, 0, fmt.Errorf("store bundle: %w", cerr)
		}
		for _, p := range done {
			os.Remove(p.tmp) // gone already when placed
		}
	}()
	er := &eofReader{r: r}
	tr := tar.NewReader(er)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if er.eof {
				// tar stops at two zero blocks without reading further;
				// reaching the end of r means the trailer was missing.
				return count, bytes, fmt.Errorf("read bundle: %w", io.ErrUnexpectedEOF)
			}
			return count, bytes, nil
		}
		if err != nil {
			return count, bytes, fmt.Errorf("read bundle: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			return count, bytes, fmt.Errorf("bundle entry %q: type %q is not a regular file", hdr.Name, hdr.Typeflag)
		}
		if !ValidHash(hdr.Name) {
			return count, bytes, fmt.Errorf("bundle entry %q: %w", hdr.Name, ErrInvalidHash)
		}
		if sparse(hdr) {
			// Holes would let a small bundle expand to any size on disk.
			return count, bytes, fmt.Errorf("bundle entry %s: sparse entries are not accepted", hdr.Name)
		}
		n, err := s.putUnsynced(tr, hdr.Name, &done)
		if err != nil {
			return count, bytes, fmt.Errorf("bundle entry %s: %w", hdr.Name, err)
		}
		count++
		bytes += n
	}
}

func sparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// eofReader records whether the underlying reader reached its end.
type eofReader struct {
	r   io.Reader
	eof bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if n == 0 && errors.Is(err, io.EOF) {
		e.eof = true
	}
	return n, err
}

// putUnsynced writes one bundle entry to a temp file (verified, not synced) and queues it
// for commit; an entry already stored is only verified.
func (s *Store) putUnsynced(r io.Reader, want string, done *[]pending) (int64, error) {
	if s.Has(want) {
		h, n, err := HashReader(r)
		if err != nil {
			return 0, err
		}
		if h != want {
			return 0, fmt.Errorf("content hashes to %s: %w", h, ErrHashMismatch)
		}
		return n, nil
	}
	p, n, err := s.writeTemp(r, want, false)
	if err != nil {
		return 0, err
	}
	*done = append(*done, p)
	return n, nil
}
