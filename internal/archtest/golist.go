package archtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
)

// ModuleRoot returns the directory of the go.mod that governs dir.
func ModuleRoot(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD in %s: %w", dir, commandError(err))
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == "/dev/null" {
		return "", fmt.Errorf("%s is not inside a Go module", dir)
	}
	return filepath.Dir(gomod), nil
}

// listed is the part of `go list -json` output that the check reads.
type listed struct {
	ImportPath string
	Imports    []string
	Module     *struct{ Path string }
}

// ListPackages runs `go list -e -json ./...` in the module at root and returns every package
// with the internal packages its non-test code imports, all paths relative to the module.
// Packages that do not compile are listed with the imports their files name (-e).
func ListPackages(ctx context.Context, root string) ([]Package, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-json=ImportPath,Imports,Module", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list ./... in %s: %w", root, commandError(err))
	}
	return decodeList(out)
}

func decodeList(out []byte) ([]Package, error) {
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		if l.Module == nil || !strings.HasPrefix(l.ImportPath, l.Module.Path+"/") {
			continue // the module's root package, or one outside it: neither has a row
		}
		prefix := l.Module.Path + "/"
		p := Package{Path: strings.TrimPrefix(l.ImportPath, prefix)}
		for _, imp := range l.Imports {
			if rel, ok := strings.CutPrefix(imp, prefix); ok && strings.HasPrefix(rel, "internal/") {
				p.Imports = append(p.Imports, rel)
			}
		}
		pkgs = append(pkgs, p)
	}
}

// commandError adds a failed command's stderr to its error.
func commandError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}
