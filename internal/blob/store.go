package blob

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

var (
	// ErrHashMismatch means content did not hash to the name it was given.
	ErrHashMismatch = errors.New("hash mismatch")
	// ErrNotFound means the store holds no blob with that hash.
	ErrNotFound = errors.New("blob not found")
	// ErrInvalidHash means a string is not a lowercase hex SHA-256.
	ErrInvalidHash = errors.New("invalid blob hash")
)

// Store is a directory of blobs laid out as <dir>/<aa>/<hash> (one level of 256 folders, as git does). Writes
// go through <dir>/tmp and are renamed into place once their hash is
// verified, so a blob that is visible is always complete. A Store is safe
// for concurrent use, also by several processes sharing the directory.
type Store struct {
	dir string
	tmp string
}

// staleTemp is how long a temp file may go unwritten before any Open removes it. A write in
// progress touches its file continuously (an upload's body stalls for at most the server's idle
// timeout), and a bundle's verified entries wait seconds for their commit; a file left alone
// for an hour belongs to a writer that died.
const staleTemp = time.Hour

// Open opens the store in dir, creating the directory if needed, and removes the temp files
// that writers which died (a killed server or supervisor) left behind more than staleTemp ago.
// Younger ones may belong to another process sharing the store; see RemoveTemp.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open blob store %s: %w", dir, err)
	}
	s := &Store{dir: abs, tmp: filepath.Join(abs, "tmp")}
	if err := os.MkdirAll(s.tmp, 0o755); err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	// Best effort: a leftover that cannot be removed now is tried again at the next Open.
	_, _ = s.removeTemp(time.Now().Add(-staleTemp))
	return s, nil
}

// RemoveTemp removes every temp file and returns how many there were. Only the store's one
// writer may call it, before it writes: the workspace server, which holds the workspace lock
// (no other process writes its store), at start, so that uploads cut by a crash or a kill do
// not stay in tmp forever.
func (s *Store) RemoveTemp() (int, error) { return s.removeTemp(time.Time{}) }

// removeTemp removes the temp files last modified before cutoff (all of them for the zero time).
func (s *Store) removeTemp(cutoff time.Time) (int, error) {
	des, err := os.ReadDir(s.tmp)
	if err != nil {
		return 0, fmt.Errorf("clean blob temp files: %w", err)
	}
	n := 0
	var first error
	for _, de := range des {
		if !cutoff.IsZero() {
			fi, err := de.Info()
			if err != nil || !fi.ModTime().Before(cutoff) {
				continue // gone meanwhile, or possibly still being written
			}
		}
		if err := os.RemoveAll(filepath.Join(s.tmp, de.Name())); err != nil {
			first = cmp.Or(first, err)
			continue
		}
		n++
	}
	if first != nil {
		return n, fmt.Errorf("clean blob temp files: %w", first)
	}
	return n, nil
}

// Dir returns the store's directory (absolute).
func (s *Store) Dir() string { return s.dir }

// Path returns where the blob with this hash lives (or would live); it
// returns "" for a string that is not a valid hash.
func (s *Store) Path(hash string) string {
	if !ValidHash(hash) {
		return ""
	}
	return filepath.Join(s.dir, hash[0:2], hash)
}

// Has reports whether the blob is stored. A blob said to be stored is kept by the collector
// for its grace from now on (see touch): whoever asked may be about to name it in a job.
func (s *Store) Has(hash string) bool {
	p := s.Path(hash)
	if p == "" {
		return false
	}
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular() && touch(p, fi)
}

// Missing returns the hashes that are not stored, in the order given,
// without duplicates. Invalid hashes are reported as missing.
func (s *Store) Missing(hashes []string) []string {
	seen := make(map[string]bool, len(hashes))
	out := []string{}
	for _, h := range hashes {
		if seen[h] {
			continue
		}
		seen[h] = true
		if !s.Has(h) {
			out = append(out, h)
		}
	}
	return out
}

// Open opens a blob for reading. A blob that is not stored gives an error
// wrapping ErrNotFound.
func (s *Store) Open(hash string) (*os.File, error) {
	p := s.Path(hash)
	if p == "" {
		return nil, fmt.Errorf("open blob %q: %w", hash, ErrInvalidHash)
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open blob %s: %w", hash, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open blob %s: %w", hash, err)
	}
	return f, nil
}

// Stat returns the size of a stored blob.
func (s *Store) Stat(hash string) (size int64, err error) {
	p := s.Path(hash)
	if p == "" {
		return 0, fmt.Errorf("stat blob %q: %w", hash, ErrInvalidHash)
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("stat blob %s: %w", hash, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("stat blob %s: %w", hash, err)
	}
	return fi.Size(), nil
}

// Put stores what r yields and returns its hash and size. If want is not
// empty the content must hash to want; otherwise the error wraps
// ErrHashMismatch and nothing is stored. Put is idempotent and safe for
// concurrent writers of the same blob.
func (s *Store) Put(r io.Reader, want string) (hash string, size int64, err error) {
	if want != "" && !ValidHash(want) {
		return "", 0, fmt.Errorf("put blob %q: %w", want, ErrInvalidHash)
	}
	if want != "" && s.Has(want) {
		// Already stored: verify the content without writing it again.
		h, n, err := HashReader(r)
		if err != nil {
			return "", 0, fmt.Errorf("put blob %s: %w", want, err)
		}
		if h != want {
			return "", 0, fmt.Errorf("put blob %s: content hashes to %s: %w", want, h, ErrHashMismatch)
		}
		return h, n, nil
	}
	p, n, err := s.writeTemp(r, want, true)
	if err == nil {
		err = s.noSpace(s.place(p.tmp, p.hash, true))
	}
	if err != nil {
		if p.tmp != "" {
			os.Remove(p.tmp)
		}
		if want != "" {
			return "", 0, fmt.Errorf("put blob %s: %w", want, err)
		}
		return "", 0, fmt.Errorf("put blob: %w", err)
	}
	return p.hash, n, nil
}

// pending is a verified blob written to a temp file, not yet in place.
type pending struct{ tmp, hash string }

// writeTemp copies r into a temp file, hashing it; with sync set the file is fsynced.
// On error the temp file is removed (p.tmp is empty).
func (s *Store) writeTemp(r io.Reader, want string, sync bool) (pending, int64, error) {
	f, err := os.CreateTemp(s.tmp, "put-*")
	if err != nil {
		return pending{}, 0, s.noSpace(err)
	}
	tmp := f.Name()
	h, n, err := copyHashed(f, r)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && want != "" && h != want {
		err = fmt.Errorf("content hashes to %s: %w", h, ErrHashMismatch)
	}
	if err != nil {
		os.Remove(tmp) // a body cut short, a mismatch, a full disk: nothing stays in tmp
		return pending{}, 0, s.noSpace(err)
	}
	return pending{tmp: tmp, hash: h}, n, nil
}

// commit makes many unsynced temp blobs durable with one file-system sync, moves them into
// place, and syncs again so the renames are durable too: two syncs for a whole bundle instead
// of two per blob.
func (s *Store) commit(ps []pending) error {
	if len(ps) == 0 {
		return nil
	}
	if err := syncFS(s.tmp, ps); err != nil {
		return s.noSpace(err)
	}
	for _, p := range ps {
		if err := s.place(p.tmp, p.hash, false); err != nil {
			return s.noSpace(err)
		}
	}
	return s.noSpace(syncFS(s.dir, nil))
}

// place renames a complete, verified temp file to its final name; with syncDir set the
// directory is synced so that the rename is durable.
func (s *Store) place(tmp, hash string, sync bool) error {
	if s.Has(hash) {
		return os.Remove(tmp)
	}
	if err := os.Chmod(tmp, 0o444); err != nil {
		return err
	}
	final := s.Path(hash)
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		// Some platforms refuse to rename over an existing file; a
		// concurrent writer of the same blob may have won the race.
		if s.Has(hash) {
			return os.Remove(tmp)
		}
		return err
	}
	if !sync {
		return nil
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be synced there
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// PutBytes stores b and returns its hash.
func (s *Store) PutBytes(b []byte) (string, error) {
	h, _, err := s.Put(bytes.NewReader(b), "")
	return h, err
}

// PutFile stores the content of the file at path, hashing it while copying.
func (s *Store) PutFile(path string) (hash string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("put file: %w", err)
	}
	defer f.Close()
	hash, size, err = s.Put(f, "")
	if err != nil {
		return "", 0, fmt.Errorf("put file %s: %w", path, err)
	}
	return hash, size, nil
}
