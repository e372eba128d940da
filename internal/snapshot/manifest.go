package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hangar-ml/hangar/internal/blob"
)

// EntryType is the kind of a manifest entry.
type EntryType string

// Entry types.
const (
	TypeFile    EntryType = "file"
	TypeDir     EntryType = "dir"
	TypeSymlink EntryType = "symlink"
)

// Entry is one file, directory or symlink of a tree.
type Entry struct {
	Path   string    `json:"path"`             // slash-separated, relative, no "..", no leading "/"
	Type   EntryType `json:"type"`             // file, dir or symlink
	Hash   string    `json:"hash,omitempty"`   // files: SHA-256 of the content
	Size   int64     `json:"size,omitempty"`   // files: size in bytes
	Mode   uint32    `json:"mode"`             // permission bits only (0755, 0644 ...)
	Target string    `json:"target,omitempty"` // symlinks, as read by os.Readlink
}

// Manifest lists a tree's entries, sorted by Path.
type Manifest struct {
	Entries []Entry `json:"entries"`
}

// ErrInvalid marks a manifest that breaks the rules Decode checks.
var ErrInvalid = errors.New("invalid manifest")

// Encode returns the canonical JSON of the manifest (entries sorted by path)
// and its hex SHA-256, which is also its blob hash. m is not modified.
func (m *Manifest) Encode() (data []byte, hash string, err error) {
	c := &Manifest{Entries: slices.Clone(m.Entries)}
	if c.Entries == nil {
		c.Entries = []Entry{}
	}
	sortEntries(c.Entries)
	if err := c.validate(); err != nil {
		return nil, "", fmt.Errorf("encode manifest: %w", err)
	}
	data, err = json.Marshal(c)
	if err != nil {
		return nil, "", fmt.Errorf("encode manifest: %w", err)
	}
	s := sha256.Sum256(data)
	return data, hex.EncodeToString(s[:]), nil
}

// Decode parses and validates a manifest: every path relative and clean,
// no duplicates, no entry below a file or symlink, valid hashes, modes that
// are permission bits only. Entries come back sorted by path. Symlink
// targets are checked by Materialize, not here.
func Decode(data []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode manifest: %w: data after the manifest", ErrInvalid)
	}
	sortEntries(m.Entries)
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	return &m, nil
}

func sortEntries(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
}

// validate checks a manifest whose entries are sorted by path.
func (m *Manifest) validate() error {
	kinds := make(map[string]EntryType, len(m.Entries))
	for i, e := range m.Entries {
		if err := e.validate(); err != nil {
			return err
		}
		if i > 0 && m.Entries[i-1].Path == e.Path {
			return fmt.Errorf("%w: duplicate path %q", ErrInvalid, e.Path)
		}
		kinds[e.Path] = e.Type
	}
	for _, e := range m.Entries {
		for p := path.Dir(e.Path); p != "."; p = path.Dir(p) {
			if t, ok := kinds[p]; ok && t != TypeDir {
				return fmt.Errorf("%w: %q is below %s %q", ErrInvalid, e.Path, t, p)
			}
		}
	}
	return nil
}

func (e *Entry) validate() error {
	if err := validPath(e.Path); err != nil {
		return err
	}
	if e.Mode&^0o777 != 0 {
		return fmt.Errorf("%w: %q: mode %#o has more than permission bits", ErrInvalid, e.Path, e.Mode)
	}
	switch e.Type {
	case TypeFile:
		if !blob.ValidHash(e.Hash) || e.Size < 0 || e.Target != "" {
			return fmt.Errorf("%w: file %q needs a valid hash, a size and no target", ErrInvalid, e.Path)
		}
	case TypeDir:
		if e.Hash != "" || e.Size != 0 || e.Target != "" {
			return fmt.Errorf("%w: directory %q has a hash, size or target", ErrInvalid, e.Path)
		}
	case TypeSymlink:
		if e.Hash != "" || e.Size != 0 || e.Target == "" || strings.ContainsRune(e.Target, 0) {
			return fmt.Errorf("%w: symlink %q needs a target and no hash or size", ErrInvalid, e.Path)
		}
	default:
		return fmt.Errorf("%w: %q: unknown type %q", ErrInvalid, e.Path, e.Type)
	}
	return nil
}

// validPath accepts clean, relative, slash-separated paths that stay inside
// the tree.
func validPath(p string) error {
	switch {
	case p == "" || p == "." || p == "..":
		return fmt.Errorf("%w: path %q", ErrInvalid, p)
	case !utf8.ValidString(p) || strings.ContainsRune(p, 0):
		return fmt.Errorf("%w: path %q is not valid UTF-8 text", ErrInvalid, p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: path %q is absolute", ErrInvalid, p)
	case path.Clean(p) != p || strings.HasPrefix(p, "../"):
		return fmt.Errorf("%w: path %q is not clean or leaves the tree", ErrInvalid, p)
	}
	return nil
}

// Files returns the file entries, in path order.
func (m *Manifest) Files() []Entry {
	var out []Entry
	for _, e := range m.Entries {
		if e.Type == TypeFile {
			out = append(out, e)
		}
	}
	return out
}

// TotalSize returns the sum of the file sizes.
func (m *Manifest) TotalSize() int64 {
	var n int64
	for _, e := range m.Entries {
		if e.Type == TypeFile {
			n += e.Size
		}
	}
	return n
}

// Hashes returns the distinct content hashes of the files, in path order.
func (m *Manifest) Hashes() []string {
	seen := make(map[string]bool)
	var out []string
	for _, e := range m.Entries {
		if e.Type == TypeFile && !seen[e.Hash] {
			seen[e.Hash] = true
			out = append(out, e.Hash)
		}
	}
	return out
}

// Diff compares two manifests by path: added are in b only, removed in a
// only, changed in both with a different type, content, mode or target.
// Each list is sorted; a nil manifest is empty.
func Diff(a, b *Manifest) (added, changed, removed []string) {
	old := make(map[string]Entry)
	if a != nil {
		for _, e := range a.Entries {
			old[e.Path] = e
		}
	}
	if b != nil {
		for _, e := range b.Entries {
			o, ok := old[e.Path]
			switch {
			case !ok:
				added = append(added, e.Path)
			case o != e:
				changed = append(changed, e.Path)
			}
			delete(old, e.Path)
		}
	}
	for p := range old {
		removed = append(removed, p)
	}
	slices.Sort(added)
	slices.Sort(changed)
	slices.Sort(removed)
	return added, changed, removed
}
