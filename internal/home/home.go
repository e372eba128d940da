package home

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Home is a local workspace directory. Database, when set, is the PostgreSQL URL of the
// workspace's database (database.go); empty, the database is the SQLite file DB().
type Home struct {
	Dir      string
	Database string
}

// Default is $HANGAR_HOME, or ~/.hangar.
func Default() (Home, error) {
	if d := os.Getenv("HANGAR_HOME"); d != "" {
		abs, err := filepath.Abs(d)
		return Home{Dir: abs}, err
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return Home{}, fmt.Errorf("find home directory (set HANGAR_HOME): %w", err)
	}
	return Home{Dir: filepath.Join(h, ".hangar")}, nil
}

// Paths inside the workspace directory.
func (h Home) DB() string         { return filepath.Join(h.Dir, "workspace.db") }
func (h Home) Blobs() string      { return filepath.Join(h.Dir, "blobs") }
func (h Home) TokenFile() string  { return filepath.Join(h.Dir, "token") }
func (h Home) ServerFile() string { return filepath.Join(h.Dir, "server.json") }
func (h Home) PIDFile() string    { return filepath.Join(h.Dir, "server.pid") }
func (h Home) LogFile() string    { return filepath.Join(h.Dir, "server.log") }
func (h Home) LocalRoot() string  { return filepath.Join(h.Dir, "local") }
func (h Home) CacheDir() string   { return filepath.Join(h.Dir, "cache") }
func (h Home) lockFile() string   { return filepath.Join(h.Dir, "server.lock") }
func (h Home) startLock() string  { return filepath.Join(h.Dir, "start.lock") }

// NodesDir holds a directory per node of the agents the local provider starts on this machine.
func (h Home) NodesDir() string { return filepath.Join(h.LocalRoot(), "nodes") }

// Ensure creates the directory (private to the user).
func (h Home) Ensure() error {
	if err := os.MkdirAll(h.Dir, 0o700); err != nil {
		return fmt.Errorf("create workspace directory: %w", err)
	}
	return nil
}

// ServerInfo is written by a running local server.
type ServerInfo struct {
	URL       string    `json:"url"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	// CA is the PEM of the certificate an https server serves: the local CLI trusts it without
	// asking (it reads it from the workspace it owns), and so do the local supervisors.
	CA string `json:"ca,omitempty"`
	// Listen is the address the server bound (its URL may name loopback for every interface).
	Listen string `json:"listen,omitempty"`
}

// ReadServerInfo reads server.json.
func (h Home) ReadServerInfo() (*ServerInfo, error) {
	b, err := os.ReadFile(h.ServerFile())
	if err != nil {
		return nil, err
	}
	var si ServerInfo
	if err := json.Unmarshal(b, &si); err != nil {
		return nil, fmt.Errorf("read %s: %w", h.ServerFile(), err)
	}
	return &si, nil
}

// WriteServerInfo writes server.json and server.pid atomically.
func (h Home) WriteServerInfo(si ServerInfo) error {
	b, err := json.MarshalIndent(si, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(h.ServerFile(), b, 0o600); err != nil {
		return err
	}
	return writeAtomic(h.PIDFile(), []byte(strconv.Itoa(si.PID)+"\n"), 0o644)
}

// ReadPID reads server.pid (0 when absent).
func (h Home) ReadPID() int {
	b, err := os.ReadFile(h.PIDFile())
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// Lock takes the server lock: one server per workspace directory. The kernel drops it when the
// process dies, so a crashed server never blocks the next one.
func (h Home) Lock() (release func(), err error) {
	f, err := os.OpenFile(h.lockFile(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open server lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if pid := h.ReadPID(); pid > 0 {
				return nil, fmt.Errorf("a server is already running for %s (pid %d)", h.Dir, pid)
			}
			return nil, fmt.Errorf("a server is already running for %s: another process holds %s", h.Dir, h.lockFile())
		}
		return nil, fmt.Errorf("take server lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// lockStopped takes the start lock, then the server lock, for work on a workspace whose server
// must not run (migrate, restore): no server runs, and none starts, until release. what says
// what the work is when a server runs ("migrate", "restore into").
func (h Home) lockStopped(what string) (release func(), err error) {
	unlock, err := lockFile(h.startLock())
	if err != nil {
		return nil, err
	}
	releaseServer, err := h.Lock()
	if err != nil {
		unlock()
		return nil, fmt.Errorf("%s %s: %w; stop it first (hangar server stop)", what, h.Dir, err)
	}
	return func() { releaseServer(); unlock() }, nil
}

// EnsureToken returns the workspace's admin token, creating it on first use.
func (h Home) EnsureToken() (string, error) {
	if t, err := h.ReadToken(); err == nil {
		return t, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	t := hex.EncodeToString(b)
	if err := writeAtomic(h.TokenFile(), []byte(t+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token: %w", err)
	}
	return t, nil
}

// ReadServer reads server.json and the admin token: what a client of the local server needs.
func (h Home) ReadServer() (*ServerInfo, string, error) {
	si, err := h.ReadServerInfo()
	if err != nil {
		return nil, "", err
	}
	tok, err := h.ReadToken()
	if err != nil {
		return nil, "", err
	}
	return si, tok, nil
}

// ReadToken reads the admin token.
func (h Home) ReadToken() (string, error) {
	b, err := os.ReadFile(h.TokenFile())
	if err != nil {
		return "", err
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", errors.New("empty token file")
	}
	return t, nil
}

func writeAtomic(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
