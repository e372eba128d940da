package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Ciphertexts look like "hangar:v1:<key id>:<base64 of nonce|sealed>". v1 is AES-256-GCM with a random
// 96-bit nonce; the header is authenticated too. The key id (first 8 bytes of the key's SHA-256, in
// hex) lets a Keyring holding old and new keys pick the right one once keys rotate.
const (
	prefix  = "hangar:"
	version = "v1"
	keySize = 32
)

var (
	// ErrUnknownKey: the ciphertext was made with a key this Key or Keyring does not hold.
	ErrUnknownKey = errors.New("encrypted with another key")
	// ErrCorrupt: the ciphertext is not one of ours, or was altered.
	ErrCorrupt = errors.New("ciphertext corrupt or altered")
)

// Key is a workspace's secret key.
type Key struct {
	id   string
	aead cipher.AEAD
}

// NewKey returns a key with 32 random bytes.
func NewKey() (*Key, error) {
	k, _, err := newKeyBytes()
	return k, err
}

func keyFrom(b []byte) (*Key, error) {
	if len(b) != keySize {
		return nil, fmt.Errorf("key is %d bytes, want %d", len(b), keySize)
	}
	block, err := aes.NewCipher(b)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return &Key{id: hex.EncodeToString(sum[:8]), aead: aead}, nil
}

// ID names the key in ciphertexts; it reveals nothing about the key.
func (k *Key) ID() string { return k.id }

// LoadOrCreateKey reads the key file at path, or creates it (mode 0600, atomically, so two
// processes starting together agree on one key) when it does not exist.
func LoadOrCreateKey(path string) (*Key, error) {
	k, err := LoadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	k, b, err := newKeyBytes()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create key %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return nil, fmt.Errorf("create key %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(base64.StdEncoding.EncodeToString(b) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	// Link, not rename: it fails when another process created the key meanwhile; then use theirs.
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if errors.Is(err, fs.ErrExist) {
		return LoadKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("create key %s: %w", path, err)
	}
	return k, nil
}

func newKeyBytes() (*Key, []byte, error) {
	b := make([]byte, keySize)
	if _, err := rand.Read(b); err != nil {
		return nil, nil, fmt.Errorf("new key: %w", err)
	}
	k, err := keyFrom(b)
	return k, b, err
}

// LoadKey reads a key file. It refuses a file that others than its owner may read or write.
func LoadKey(path string) (*Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load key: %w", err)
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return nil, fmt.Errorf("load key %s: mode %04o lets others read it, want 0600 (chmod 600 %s)", path, m, path)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load key: %w", err)
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(text)))
	if err != nil {
		return nil, fmt.Errorf("load key %s: not base64", path)
	}
	k, err := keyFrom(b)
	if err != nil {
		return nil, fmt.Errorf("load key %s: %w", path, err)
	}
	return k, nil
}

// Encrypt seals plaintext; every call gives a different ciphertext.
func (k *Key) Encrypt(plaintext []byte) (string, error) {
	header := prefix + version + ":" + k.id + ":"
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("encrypt: %w", err)
	}
	sealed := k.aead.Seal(nonce, nonce, plaintext, []byte(header))
	return header + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// Decrypt opens a ciphertext made by Encrypt with this key.
func (k *Key) Decrypt(ciphertext string) ([]byte, error) {
	id, header, body, err := parse(ciphertext)
	if err != nil {
		return nil, err
	}
	if id != k.id {
		return nil, fmt.Errorf("decrypt: key %s: %w", id, ErrUnknownKey)
	}
	n := k.aead.NonceSize()
	if len(body) < n+k.aead.Overhead() {
		return nil, fmt.Errorf("decrypt: %w", ErrCorrupt)
	}
	plain, err := k.aead.Open(nil, body[:n], body[n:], []byte(header))
	if err != nil {
		return nil, fmt.Errorf("decrypt: %w", ErrCorrupt)
	}
	return plain, nil
}

// parse splits "hangar:v1:<id>:<base64>" into the key id, the authenticated header and the body.
func parse(s string) (id, header string, body []byte, err error) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return "", "", nil, fmt.Errorf("decrypt: no %q prefix: %w", prefix, ErrCorrupt)
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) != 3 {
		return "", "", nil, fmt.Errorf("decrypt: %w", ErrCorrupt)
	}
	if parts[0] != version {
		return "", "", nil, fmt.Errorf("decrypt: unknown format %q (this build reads %s): %w", parts[0], version, ErrCorrupt)
	}
	body, err = base64.RawStdEncoding.DecodeString(parts[2])
	if err != nil {
		return "", "", nil, fmt.Errorf("decrypt: %w", ErrCorrupt)
	}
	return parts[1], prefix + parts[0] + ":" + parts[1] + ":", body, nil
}

// IsEncrypted reports whether s looks like a ciphertext of this package (to tell stored values
// that still need encrypting from ones that do not).
func IsEncrypted(s string) bool {
	_, _, _, err := parse(s)
	return err == nil
}

// Keyring decrypts with any of its keys and encrypts with the first: the shape key rotation takes
// (add the new key first, re-encrypt, drop the old one).
type Keyring []*Key

// Encrypt seals plaintext with the first key.
func (r Keyring) Encrypt(plaintext []byte) (string, error) {
	if len(r) == 0 {
		return "", errors.New("encrypt: empty keyring")
	}
	return r[0].Encrypt(plaintext)
}

// Decrypt opens ciphertext with the key it names.
func (r Keyring) Decrypt(ciphertext string) ([]byte, error) {
	id, _, _, err := parse(ciphertext)
	if err != nil {
		return nil, err
	}
	for _, k := range r {
		if k.id == id {
			return k.Decrypt(ciphertext)
		}
	}
	return nil, fmt.Errorf("decrypt: key %s: %w", id, ErrUnknownKey)
}
