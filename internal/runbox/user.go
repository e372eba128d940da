package runbox

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// RunUserEnv names the user a node's runs execute as when its Hangar processes (server, agent,
// supervisor) run as root: a user name, a uid or uid:gid, or root to keep root. Unset, runs
// execute as DefaultRunUser, as CI systems and Slurm run jobs as an unprivileged user.
const RunUserEnv = "HANGAR_RUN_USER"

// DefaultRunUser is who runs execute as on a root node when RunUserEnv is not set.
const DefaultRunUser = "nobody"

// User is who a box's commands run as, when not the caller's own user.
type User struct {
	Name     string
	UID, GID int
}

func (u *User) String() string {
	if u.Name != "" {
		return fmt.Sprintf("%s (uid %d)", u.Name, u.UID)
	}
	return fmt.Sprintf("uid %d", u.UID)
}

// RunUser resolves a node's run user setting for a process whose effective uid is euid: nil
// means the box's commands run as that process's own user.
func RunUser(setting string, euid int) (*User, error) {
	setting = strings.TrimSpace(setting)
	if euid != 0 {
		if setting == "" {
			return nil, nil
		}
		u, err := lookupUser(setting)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", RunUserEnv, setting, err)
		}
		if u.UID != euid {
			return nil, fmt.Errorf("%s=%s: only a node whose Hangar processes run as root can run runs as another user", RunUserEnv, setting)
		}
		return nil, nil
	}
	if setting == "" {
		u, err := lookupUser(DefaultRunUser)
		if err != nil { // a machine without the account still has its uid
			return &User{Name: DefaultRunUser, UID: 65534, GID: 65534}, nil
		}
		return u, nil
	}
	u, err := lookupUser(setting)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", RunUserEnv, setting, err)
	}
	if u.UID == 0 {
		return nil, nil // root, as asked
	}
	return u, nil
}

// lookupUser reads a user name, a uid, or uid:gid.
func lookupUser(s string) (*User, error) {
	if uidS, gidS, ok := strings.Cut(s, ":"); ok {
		uid, err1 := strconv.Atoi(uidS)
		gid, err2 := strconv.Atoi(gidS)
		if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
			return nil, fmt.Errorf("expected a user name, a uid, or uid:gid")
		}
		u := &User{UID: uid, GID: gid}
		if pw, err := user.LookupId(uidS); err == nil {
			u.Name = pw.Username
		}
		return u, nil
	}
	var pw *user.User
	var err error
	if _, numErr := strconv.Atoi(s); numErr == nil {
		pw, err = user.LookupId(s)
	} else {
		pw, err = user.Lookup(s)
	}
	if err != nil {
		return nil, fmt.Errorf("no such user on this node")
	}
	uid, err1 := strconv.Atoi(pw.Uid)
	gid, err2 := strconv.Atoi(pw.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s has no numeric uid and gid", s)
	}
	return &User{Name: pw.Username, UID: uid, GID: gid}, nil
}

// canTraverse reports whether u may look up names in the directory st (its search bit for u's
// uid, else gid, else others; u has no supplementary groups in the box).
func canTraverse(st os.FileInfo, u *User) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	mode := st.Mode().Perm()
	switch {
	case int(sys.Uid) == u.UID:
		return mode&0o100 != 0
	case int(sys.Gid) == u.GID:
		return mode&0o010 != 0
	}
	return mode&0o001 != 0
}

// blockedAncestors are, for each path the box must show u, the topmost directory above it that
// u cannot search (a workspace under /root, a test's 0700 temporary directory). In the sandbox
// each becomes an empty tmpfs with only those paths bound back: u could see nothing under it
// anyway, so nothing is shown that u could not reach before, only the paths Hangar gives it. A
// path under a hidden directory is reached through that directory's tmpfs: only the ancestors
// above the hidden directory count.
func blockedAncestors(paths, hidden []string, u *User) []string {
	var out []string
	for _, p := range paths {
		limit := p
		for _, h := range hidden {
			if under(p, []string{h}) && len(h) < len(limit) {
				limit = h
			}
		}
		var walked string
		for _, part := range strings.Split(filepath.Dir(limit), string(filepath.Separator)) {
			if part == "" {
				continue
			}
			walked = filepath.Join("/", walked, part)
			st, err := os.Stat(walked)
			if err != nil || !st.IsDir() {
				break
			}
			if !canTraverse(st, u) {
				out = append(out, walked)
				break
			}
		}
	}
	return topmost(out)
}

// topmost keeps the directories that are not inside another of them, without repeats.
func topmost(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if d == "/" || under(d, dirs) || contains(out, d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Chown gives u the paths (and, for directories, everything under them, links not followed): the
// folders a run writes to. It does nothing without a run user.
func Chown(u *User, paths ...string) error {
	if u == nil {
		return nil
	}
	for _, root := range paths {
		err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				if os.IsNotExist(err) && p == root {
					return nil
				}
				return err
			}
			return os.Lchown(p, u.UID, u.GID)
		})
		if err != nil {
			return fmt.Errorf("give %s to %s: %w", root, u, err)
		}
	}
	return nil
}
