package secrets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Box is the workspace's secret box as the server holds it: the key file at its path and, while a
// key rotation is under way, the rotation's key in the file beside it (path + ".new"). It seals
// with the newest key it holds and opens with either, so that whatever a crash interrupts, every
// stored value stays readable: the old key file is replaced only once every value is sealed
// under the new key (CommitRotation), and a rotation found begun at start is finished then.
type Box struct {
	path string
	mu   sync.RWMutex
	cur  *Key
	next *Key // the rotation's key: on disk at path.new, not committed yet
}

// OpenBox loads (or creates) the key file at path and the key of a rotation begun beside it.
func OpenBox(path string) (*Box, error) {
	cur, err := LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	b := &Box{path: path, cur: cur}
	next, err := LoadKey(b.nextPath())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		b.next = next
	}
	return b, nil
}

func (b *Box) nextPath() string { return b.path + ".new" }

// ring is the box's keys, the one that seals first.
func (b *Box) ring() Keyring {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.next != nil {
		return Keyring{b.next, b.cur}
	}
	return Keyring{b.cur}
}

// Encrypt seals plaintext with the newest key.
func (b *Box) Encrypt(plaintext []byte) (string, error) { return b.ring().Encrypt(plaintext) }

// Decrypt opens a ciphertext made under any key of the box.
func (b *Box) Decrypt(ciphertext string) ([]byte, error) { return b.ring().Decrypt(ciphertext) }

// Current reports whether ciphertext is sealed under the key Encrypt uses now.
func (b *Box) Current(ciphertext string) bool {
	id, _, _, err := parse(ciphertext)
	return err == nil && id == b.ring()[0].id
}

// Rotating reports whether a rotation was begun and not committed.
func (b *Box) Rotating() bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.next != nil
}

// BeginRotation makes a new key and writes it, durably, beside the current one; from then on
// Encrypt uses it. A rotation already begun (a crash, or a failed commit) is resumed with its key.
func (b *Box) BeginRotation() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next != nil {
		return nil
	}
	k, err := LoadOrCreateKey(b.nextPath())
	if err != nil {
		return fmt.Errorf("begin key rotation: %w", err)
	}
	if err := syncDir(filepath.Dir(b.path)); err != nil {
		return fmt.Errorf("begin key rotation: %w", err)
	}
	b.next = k
	return nil
}

// CommitRotation makes the rotation's key the only one: its file replaces the old key file in
// one rename. Call it only once nothing stored is sealed under the old key.
func (b *Box) CommitRotation() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == nil {
		return errors.New("commit key rotation: no rotation begun")
	}
	if err := os.Rename(b.nextPath(), b.path); err != nil {
		return fmt.Errorf("commit key rotation: %w", err)
	}
	if err := syncDir(filepath.Dir(b.path)); err != nil {
		return fmt.Errorf("commit key rotation: %w", err)
	}
	b.cur, b.next = b.next, nil
	return nil
}

// KeyID names the key Encrypt uses now (for messages; it reveals nothing about the key).
func (b *Box) KeyID() string { return b.ring()[0].id }

// syncDir makes a rename or a new file in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
