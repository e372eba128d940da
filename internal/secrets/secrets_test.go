package secrets

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newKey(t *testing.T) *Key {
	t.Helper()
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestEncryptDecrypt(t *testing.T) {
	k := newKey(t)
	tests := []struct {
		name  string
		plain []byte
	}{
		{"empty", []byte{}},
		{"password", []byte("hunter2")},
		{"ssh key", []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n")},
		{"binary", []byte{0, 1, 2, 255, 254, 0}},
		{"large", bytes.Repeat([]byte("secret"), 100_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c1, err := k.Encrypt(tt.plain)
			if err != nil {
				t.Fatal(err)
			}
			c2, _ := k.Encrypt(tt.plain)
			if c1 == c2 {
				t.Error("two encryptions are equal: the nonce is not random")
			}
			if !strings.HasPrefix(c1, "hangar:v1:"+k.ID()+":") || !IsEncrypted(c1) {
				t.Errorf("ciphertext %.40q lacks the versioned prefix", c1)
			}
			// Neither the text nor the bytes under its base64 hold the plaintext.
			body, err := base64.RawStdEncoding.DecodeString(strings.SplitN(c1, ":", 4)[3])
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.plain) > 0 && (strings.Contains(c1, string(tt.plain)) || bytes.Contains(body, tt.plain)) {
				t.Error("ciphertext contains the plaintext")
			}
			got, err := k.Decrypt(c1)
			if err != nil || !bytes.Equal(got, tt.plain) {
				t.Errorf("Decrypt = %d bytes, %v", len(got), err)
			}
		})
	}
}

func TestDecryptRefuses(t *testing.T) {
	k, other := newKey(t), newKey(t)
	c, err := k.Encrypt([]byte("top secret"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(c, ":", 4)
	body, _ := base64.RawStdEncoding.DecodeString(parts[3])
	flipped := append([]byte(nil), body...)
	flipped[len(flipped)-1] ^= 1
	tests := []struct {
		name string
		in   string
		key  *Key
		want error
	}{
		{"other key", c, other, ErrUnknownKey},
		{"altered body", parts[0] + ":" + parts[1] + ":" + parts[2] + ":" + base64.RawStdEncoding.EncodeToString(flipped), k, ErrCorrupt},
		{"id swapped to the other key's", "hangar:v1:" + other.ID() + ":" + parts[3], other, ErrCorrupt},
		{"unknown version", "hangar:v9:" + k.ID() + ":" + parts[3], k, ErrCorrupt},
		{"no prefix", "top secret", k, ErrCorrupt},
		{"not base64", "hangar:v1:" + k.ID() + ":!!!", k, ErrCorrupt},
		{"too short", "hangar:v1:" + k.ID() + ":AAAA", k, ErrCorrupt},
		{"truncated", "hangar:v1", k, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.key.Decrypt(tt.in); !errors.Is(err, tt.want) {
				t.Errorf("Decrypt = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestKeyring(t *testing.T) {
	old, cur := newKey(t), newKey(t)
	oldC, _ := old.Encrypt([]byte("from before"))
	ring := Keyring{cur, old}
	if got, err := ring.Decrypt(oldC); err != nil || string(got) != "from before" {
		t.Errorf("Decrypt with the old key in the ring = %q, %v", got, err)
	}
	c, _ := ring.Encrypt([]byte("now"))
	if !strings.Contains(c, cur.ID()) {
		t.Error("keyring did not encrypt with its first key")
	}
	if _, err := (Keyring{cur}).Decrypt(oldC); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("after dropping the old key: %v, want ErrUnknownKey", err)
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ws", "secret.key")
	k1, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v; want 0600", fi.Mode(), err)
	}
	k2, err := LoadOrCreateKey(path)
	if err != nil || k2.ID() != k1.ID() {
		t.Fatalf("second LoadOrCreateKey gave key %s (%v), want the same %s", k2.ID(), err, k1.ID())
	}
	c, _ := k1.Encrypt([]byte("x"))
	if got, err := k2.Decrypt(c); err != nil || string(got) != "x" {
		t.Errorf("reloaded key cannot decrypt: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("key directory holds %d entries, want only the key", len(entries))
	}

	os.Chmod(path, 0o644)
	if _, err := LoadKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("LoadKey of a 0644 file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.key")
	os.WriteFile(bad, []byte("c2hvcnQ=\n"), 0o600)
	if _, err := LoadKey(bad); err == nil {
		t.Error("LoadKey of a short key: no error")
	}
}

func TestLoadOrCreateKeyConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			k, err := LoadOrCreateKey(path)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = k.ID()
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("processes disagree on the key: %v", ids)
		}
	}
}
