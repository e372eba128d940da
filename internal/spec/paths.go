package spec

import (
	"errors"
	"fmt"
	"github.com/hangar-ml/hangar/internal/pattern"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxTextFile bounds the conda and requirements files read into a spec.
const maxTextFile = 1 << 20

var uriScheme = pattern.New(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// isURI reports whether s names remote data rather than a local path: any scheme://
// URI except file://, runs:/ model URIs and azureml: asset references.
func isURI(s string) bool {
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "file:") {
		return false
	}
	return uriScheme.MatchString(s) || strings.HasPrefix(lower, "azureml:") || strings.HasPrefix(lower, "runs:/")
}

// localPath strips an optional file: or file:// prefix from a local path.
func localPath(s string) string {
	switch lower := strings.ToLower(s); {
	case strings.HasPrefix(lower, "file://"):
		return s[len("file://"):]
	case strings.HasPrefix(lower, "file:"):
		return s[len("file:"):]
	}
	return s
}

// abs resolves a local path against the spec's directory.
func (d *decoder) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.baseDir, p)
}

// stat looks up a local path as written in the spec, reporting a missing path (or
// another failure) on n. It returns the absolute path and its info, or false.
func (d *decoder) stat(n *yaml.Node, path, written string) (string, fs.FileInfo, bool) {
	p := d.abs(localPath(written))
	info, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.errorf(n, path, "%s does not exist", written)
		return "", nil, false
	case err != nil:
		d.errorf(n, path, "%s: %v", written, unwrapPathError(err))
		return "", nil, false
	}
	return p, info, true
}

// dir checks that a local path is an existing directory and returns it absolute.
func (d *decoder) dir(n *yaml.Node, path, written, what string) (string, bool) {
	p, info, ok := d.stat(n, path, written)
	if ok && !info.IsDir() {
		d.errorf(n, path, "%s is a file; %s must be a directory", written, what)
		return "", false
	}
	return p, ok
}

// textFile reads a small local text file named by n (conda_file, requirements) and
// returns its absolute path and content.
func (d *decoder) textFile(n *yaml.Node, path string) (string, string, bool) {
	written := d.str(n, path)
	if written == "" {
		d.expected(n, path, "a local file path")
		return "", "", false
	}
	if isURI(written) {
		d.errorf(n, path, "expected a local file, got URI %s", quote(written))
		return "", "", false
	}
	p, info, ok := d.stat(n, path, written)
	if !ok {
		return "", "", false
	}
	if !info.Mode().IsRegular() {
		d.errorf(n, path, "%s is not a regular file", written)
		return "", "", false
	}
	if !d.confined(n, path, written, p) { // confine.go
		return "", "", false
	}
	data, err := readSmall(p)
	if err != nil {
		d.errorf(n, path, "%s: %v", written, unwrapPathError(err))
		return "", "", false
	}
	return p, string(data), true
}

// readSmall reads at most maxTextFile bytes and refuses larger files.
func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTextFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTextFile {
		return nil, fmt.Errorf("larger than %d bytes", maxTextFile)
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
