package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// BinDir is where PutBinary keeps binaries on a host, relative to the home directory.
const BinDir = ".hangar/bin"

// PutBinary makes sure the local file is on the host as BinDir/<name>-<sha256[:16]> (content-addressed,
// so versions live side by side and a path never changes meaning) and returns that path and whether
// it had to be uploaded. A file already there with the right hash is kept; an upload goes through a
// temporary file, is renamed into place and is checked by hash on the host.
func PutBinary(ctx context.Context, r Runner, local, name string) (remotePath string, uploaded bool, err error) {
	f, err := os.Open(local)
	if err != nil {
		return "", false, fmt.Errorf("put binary: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false, fmt.Errorf("put binary %s: %w", local, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	remotePath = path.Join(BinDir, name+"-"+sum[:16])

	if got, err := remoteSHA256(ctx, r, remotePath); err != nil {
		return "", false, fmt.Errorf("put binary %s: %w", remotePath, err)
	} else if got == sum {
		return remotePath, false, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", false, fmt.Errorf("put binary %s: %w", local, err)
	}
	if err := r.Put(ctx, remotePath, f, 0o755); err != nil {
		return "", false, fmt.Errorf("put binary: %w", err)
	}
	got, err := remoteSHA256(ctx, r, remotePath)
	if err != nil {
		return "", true, fmt.Errorf("put binary %s: verify: %w", remotePath, err)
	}
	if got != sum {
		Output(ctx, r, "rm -f "+Quote(remotePath))
		return "", true, fmt.Errorf("put binary %s: hash on host %q, want %s", remotePath, got, sum)
	}
	return remotePath, true, nil
}

// hashFunc is a shell function printing the SHA-256 of its stdin: sha256sum (GNU, busybox) or shasum (BSD, macOS).
const hashFunc = `sha() { if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi | cut -d' ' -f1; }; `

// remoteSHA256 returns the SHA-256 of a file on the host, "" when it is missing or not executable.
func remoteSHA256(ctx context.Context, r Runner, p string) (string, error) {
	out, err := Output(ctx, r, hashFunc+"if [ -f "+Quote(p)+" ] && [ -x "+Quote(p)+" ]; then sha < "+Quote(p)+"; fi")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
