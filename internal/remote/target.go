package remote

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// What the backends that reach hosts over SSH (attached VMs, a Slurm cluster's login host) share:
// how a compute target's host becomes a Config, where Hangar's files live on it, whether its
// architecture runs this binary, and seeding its blob cache with what a run reads.

// ConfigFor is how to reach a target's host: its login, its secrets (unsealed), and its host key
// policy: the pinned key, else the known_hosts file, else trust on first use (attach only).
func ConfigFor(h compute.SSHHost) Config {
	cfg := Config{Host: h.Host, Port: h.Port, User: h.AdminUsername, Password: h.AdminPassword}
	if h.PrivateKey != "" {
		cfg.Key = []byte(h.PrivateKey)
	}
	switch {
	case h.HostKey != "":
		cfg.HostKey = HostKeyPolicy{Pinned: h.HostKey}
	case h.KnownHosts != "":
		cfg.HostKey = HostKeyPolicy{KnownHosts: h.KnownHosts}
	default:
		cfg.HostKey = HostKeyPolicy{TrustOnFirstUse: true}
	}
	return cfg
}

// WorkDir resolves a target's work_dir on a host: empty or "~" is ~/.hangar, "~/x" and relative
// paths are under the home directory.
func WorkDir(ctx context.Context, r Runner, dir string) (string, error) {
	home, err := Home(ctx, r)
	if err != nil {
		return "", err
	}
	switch {
	case dir == "" || dir == "~":
		return path.Join(home, ".hangar"), nil
	case strings.HasPrefix(dir, "~/"):
		return path.Join(home, dir[2:]), nil
	case !path.IsAbs(dir):
		return path.Join(home, dir), nil
	}
	return dir, nil
}

// CheckArch refuses a host whose architecture (uname -m) cannot run a binary built for goarch.
func CheckArch(machine, goarch string) error {
	if a := goArch(strings.TrimSpace(machine)); a != goarch {
		return fmt.Errorf("the host's architecture is %s but this hangar binary is for %s", a, goarch)
	}
	return nil
}

// Unreachable is nil while the client is connected, else an error saying since when the host
// (named by what) does not answer and why: the state of a run there is unknown meanwhile.
func (c *Client) Unreachable(what string) error {
	s := c.State()
	if s.Connected {
		return nil
	}
	return fmt.Errorf("%s unreachable since %s: %w", what, s.Since.Format("15:04:05"), s.Err)
}

// SeedStats says what SeedCache sent.
type SeedStats struct {
	Manifests int // manifests the cache lacked
	PutStats      // their files (and the manifests)
}

// SeedCache sends the host's blob cache (cache, a blob.Store layout) what it lacks of manifests
// and the files they list, from the workspace's store, so that a supervisor there finds a run's
// code and inputs without fetching each file from the server. A manifest goes after its files: a
// host that has a manifest has everything it lists, and an unchanged tree costs one command.
func SeedCache(ctx context.Context, r Runner, cache string, blobs *blob.Store, manifests []string) (SeedStats, error) {
	var st SeedStats
	missing, err := MissingBlobs(ctx, r, cache, manifests)
	if err != nil {
		return st, fmt.Errorf("check cache: %w", err)
	}
	for _, m := range missing {
		man, err := readManifest(blobs, m)
		if err != nil {
			return st, err
		}
		files, err := PutBlobs(ctx, r, cache, blobs, man.Hashes())
		if err != nil {
			return st, fmt.Errorf("send snapshot: %w", err)
		}
		self, err := PutBlobs(ctx, r, cache, blobs, []string{m})
		if err != nil {
			return st, fmt.Errorf("send snapshot: %w", err)
		}
		st.Manifests++
		st.Present += files.Present
		st.Sent += files.Sent + self.Sent
		st.Bytes += files.Bytes + self.Bytes
	}
	return st, nil
}

// readManifest reads a manifest from the workspace's store.
func readManifest(blobs *blob.Store, hash string) (*snapshot.Manifest, error) {
	f, err := blobs.Open(hash)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", hash, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", hash, err)
	}
	m, err := snapshot.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", hash, err)
	}
	return m, nil
}
