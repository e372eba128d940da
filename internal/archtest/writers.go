package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Writers returns, sorted, one sentence for each place in the non-test Go code under root
// (cmd/ and internal/) that names name (a field or type, e.g. the store's RunWrites) outside
// the package directories allowed (module-relative, e.g. internal/controller; a directory
// allows only itself, not the packages below it). It reads selectors (x.RunWrites,
// store.RunWrites), so a use through any variable or import name is found.
func Writers(root, name string, allowed []string) ([]string, error) {
	var out []string
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			dir, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if slices.Contains(allowed, filepath.ToSlash(dir)) {
				return nil
			}
			found, err := selectorsNamed(path, name)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			for _, line := range found {
				out = append(out, fmt.Sprintf("%s:%d: uses %s; only %s may (ask the run core instead)", filepath.ToSlash(rel), line, name, strings.Join(allowed, ", ")))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// selectorsNamed returns the lines of path where a selector ends in name.
func selectorsNamed(path, name string) ([]int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok && s.Sel.Name == name {
			lines = append(lines, fset.Position(s.Sel.Pos()).Line)
		}
		return true
	})
	return lines, nil
}
