package envs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Interpreter is a Python found on the node.
type Interpreter struct {
	Path    string `json:"path"`
	Version string `json:"version"` // e.g. 3.11.7
}

// Locator finds the interpreter an environment is built with.
type Locator interface {
	Find(ctx context.Context, constraint string) (Interpreter, error)
}

// Finder finds Python interpreters. Candidates are tried in order; the first that satisfies the
// constraint wins.
type Finder struct {
	// Candidates lists interpreter paths to try; nil means DefaultCandidates().
	Candidates []string
	// Runner runs each candidate to learn its version (nil: straight on the node): where the
	// environment is built, since a candidate the build cannot run is no candidate.
	Runner Runner
}

// DefaultCandidates are, in order: python3 and python3.X on PATH, then /usr/local/bin, /usr/bin,
// and pyenv's versions.
func DefaultCandidates() []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" || seen[p] {
			return
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	if p, err := exec.LookPath("python3"); err == nil {
		add(p)
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		matches, _ := filepath.Glob(filepath.Join(dir, "python3.[0-9]*"))
		sort.Sort(sort.Reverse(sort.StringSlice(matches)))
		for _, m := range matches {
			if !strings.HasSuffix(m, "-config") {
				add(m)
			}
		}
	}
	for _, dir := range []string{"/usr/local/bin", "/usr/bin"} {
		add(filepath.Join(dir, "python3"))
		matches, _ := filepath.Glob(filepath.Join(dir, "python3.[0-9]*"))
		for _, m := range matches {
			if !strings.HasSuffix(m, "-config") {
				add(m)
			}
		}
	}
	home, _ := os.UserHomeDir()
	root := os.Getenv("PYENV_ROOT")
	if root == "" && home != "" {
		root = filepath.Join(home, ".pyenv")
	}
	matches, _ := filepath.Glob(filepath.Join(root, "versions", "*", "bin", "python3"))
	for _, m := range matches {
		add(m)
	}
	return out
}

// Find returns the first interpreter satisfying the constraint (conda syntax: "3.11", "=3.11",
// ">=3.9,<3.12", "3.11.*", "" or "*" for any). The error lists what the node has.
func (f Finder) Find(ctx context.Context, constraint string) (Interpreter, error) {
	cands := f.Candidates
	if cands == nil {
		cands = DefaultCandidates()
	}
	var seen []string
	for _, c := range cands {
		v, err := version(ctx, runnerOr(f.Runner), c)
		if err != nil {
			continue
		}
		seen = append(seen, fmt.Sprintf("%s (%s)", v, c))
		ok, err := Satisfies(v, constraint)
		if err != nil {
			return Interpreter{}, err
		}
		if ok {
			return Interpreter{Path: c, Version: v}, nil
		}
	}
	if len(seen) == 0 {
		return Interpreter{}, fmt.Errorf("no Python interpreter found on this node")
	}
	return Interpreter{}, fmt.Errorf("python %s is requested, but this node has only %s", constraint, strings.Join(seen, ", "))
}

func version(ctx context.Context, r Runner, py string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := r.Run(ctx, &out, BuildEnv(), py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"); err != nil {
		return "", err
	}
	v := strings.TrimSpace(out.String())
	if _, err := parseVersion(v); err != nil {
		return "", fmt.Errorf("%s printed %q for its version", py, v)
	}
	return v, nil
}

// Satisfies reports whether version v (like 3.11.7) meets a conda-style constraint.
func Satisfies(v, constraint string) (bool, error) {
	constraint = strings.TrimSpace(constraint)
	if constraint == "" || constraint == "*" {
		return true, nil
	}
	for _, part := range strings.Split(constraint, ",") {
		ok, err := satisfiesOne(v, strings.TrimSpace(part))
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func satisfiesOne(v, c string) (bool, error) {
	op := ""
	for _, o := range []string{"==", ">=", "<=", "!=", "~=", ">", "<", "="} {
		if strings.HasPrefix(c, o) {
			op, c = o, strings.TrimSpace(c[len(o):])
			break
		}
	}
	c = strings.TrimSuffix(strings.TrimSuffix(c, ".*"), "*")
	want, err := parseVersion(c)
	if err != nil {
		return false, fmt.Errorf("python constraint %q: %w", c, err)
	}
	have, err := parseVersion(v)
	if err != nil {
		return false, err
	}
	cmp := compare(have, want)
	switch op {
	case "", "=", "~=":
		return prefixEqual(have, want), nil // conda: "3.11" and "=3.11" mean 3.11.*
	case "==":
		return cmp == 0 || (len(want) < 3 && prefixEqual(have, want)), nil
	case ">=":
		return cmp >= 0, nil
	case "<=":
		return cmp <= 0 || prefixEqual(have, want), nil
	case ">":
		return cmp > 0 && !prefixEqual(have, want), nil
	case "<":
		return cmp < 0 && !prefixEqual(have, want), nil
	case "!=":
		return !prefixEqual(have, want), nil
	}
	return false, nil
}

func parseVersion(s string) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("empty version")
	}
	var out []int
	for _, p := range strings.Split(s, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("not a version: %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// compare compares two versions over the length of the shorter.
func compare(a, b []int) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func prefixEqual(have, want []int) bool {
	if len(want) > len(have) {
		return false
	}
	return compare(have, want) == 0
}
