package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Defaults for ScanOptions fields left nil.
var (
	DefaultIgnoreFiles    = []string{".hangarignore", ".amlignore", ".gitignore"}
	DefaultIgnorePatterns = []string{".git", "__pycache__", ".venv"}
)

// ignorer decides what a scan leaves out. Defaults always apply and cannot
// be negated; the per-directory patterns follow gitignore precedence
// (deeper files and later lines win).
type ignorer struct {
	files    []string
	defaults gitignore.Matcher
}

func newIgnorer(opts ScanOptions) *ignorer {
	files, defs := opts.IgnoreFiles, opts.DefaultIgnores
	if files == nil {
		files = DefaultIgnoreFiles
	}
	if defs == nil {
		defs = DefaultIgnorePatterns
	}
	return &ignorer{files: files, defaults: gitignore.NewMatcher(parsePatterns([]byte(strings.Join(defs, "\n")), nil))}
}

// dirPatterns returns the patterns in effect in the directory at abs (whose
// path in the tree is domain): the parent's plus those of the first ignore
// file found there.
func (ig *ignorer) dirPatterns(abs string, domain []string, parent []gitignore.Pattern, names map[string]fs.DirEntry) ([]gitignore.Pattern, error) {
	for _, name := range ig.files {
		if _, ok := names[name]; !ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(abs, name))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || isDir(filepath.Join(abs, name)) {
				continue // a dangling symlink or a directory: not an ignore file
			}
			return nil, fmt.Errorf("read ignore file: %w", err)
		}
		ps := parsePatterns(data, domain)
		if len(ps) == 0 {
			return parent, nil
		}
		// Copy so siblings never share (and overwrite) the backing array.
		out := make([]gitignore.Pattern, 0, len(parent)+len(ps))
		return append(append(out, parent...), ps...), nil
	}
	return parent, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ignored reports whether the entry at parts (its path in the tree) is left
// out under the given patterns.
func (ig *ignorer) ignored(parts []string, isDir bool, ps []gitignore.Pattern) bool {
	if ig.defaults.Match(parts, isDir) {
		return true
	}
	return len(ps) > 0 && gitignore.NewMatcher(ps).Match(parts, isDir)
}

// parsePatterns reads gitignore lines: blank lines and comments are
// skipped, a trailing CR is dropped, the rest is go-git's syntax.
func parsePatterns(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
