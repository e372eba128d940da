package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// typeKey names a type of the module: its package directory (module-relative) and its name.
type typeKey struct{ Dir, Name string }

func (k typeKey) String() string { return k.Dir + "." + k.Name }

// typeDecls is what the parsed source says of the module's named types: the methods declared on
// each, the types each struct embeds, and each interface's own methods and embedded interfaces.
type typeDecls struct {
	methods map[typeKey][]string
	embeds  map[typeKey][]typeKey
}

// MethodSets returns the size of the method set of every named type declared in non-test Go
// files under root/sub: its declared methods and those it gets from the types it embeds (struct
// fields without a name, interfaces' embedded interfaces), as Go promotes them. It reads the
// source with go/parser, not the type checker, so that the check stays fast: embedded types from
// outside the module count nothing, and a name promoted twice counts once.
func MethodSets(root, sub, module string) (map[string]int, error) {
	d, err := readTypeDecls(root, sub, module)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for k := range d.knownTypes() {
		out[k.String()] = len(d.methodSet(k, map[typeKey]bool{}))
	}
	return out, nil
}

// Embedders returns, sorted, the named types declared in non-test Go files under root/sub that
// embed target ("internal/store.Store"), directly or through another type they embed, and so
// promote all of it.
func Embedders(root, sub, module, target string) ([]string, error) {
	d, err := readTypeDecls(root, sub, module)
	if err != nil {
		return nil, err
	}
	var out []string
	for k := range d.knownTypes() {
		if d.embedsType(k, target, map[typeKey]bool{}) {
			out = append(out, k.String())
		}
	}
	slices.Sort(out)
	return out, nil
}

// readTypeDecls parses the non-test Go files under root/sub.
func readTypeDecls(root, sub, module string) (*typeDecls, error) {
	d := &typeDecls{methods: map[typeKey][]string{}, embeds: map[typeKey][]typeKey{}}
	err := filepath.WalkDir(filepath.Join(root, sub), func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		return d.addFile(path, filepath.ToSlash(rel), module)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (d *typeDecls) knownTypes() map[typeKey]bool {
	all := map[typeKey]bool{}
	for k := range d.methods {
		all[k] = true
	}
	for k := range d.embeds {
		all[k] = true
	}
	return all
}

// methodSet is the names of k's methods, its own and its embedded types', without repeats.
func (d *typeDecls) methodSet(k typeKey, seen map[typeKey]bool) map[string]bool {
	set := map[string]bool{}
	if seen[k] {
		return set
	}
	seen[k] = true
	for _, m := range d.methods[k] {
		set[m] = true
	}
	for _, e := range d.embeds[k] {
		for m := range d.methodSet(e, seen) {
			set[m] = true
		}
	}
	return set
}

// embedsType reports whether k embeds the type named target, directly or through its embedded
// types.
func (d *typeDecls) embedsType(k typeKey, target string, seen map[typeKey]bool) bool {
	if seen[k] {
		return false
	}
	seen[k] = true
	for _, e := range d.embeds[k] {
		if e.String() == target || d.embedsType(e, target, seen) {
			return true
		}
	}
	return false
}

func (d *typeDecls) addFile(path, dir, module string) error {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	imports := map[string]string{} // local name -> module-relative dir
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		name := filepath.Base(rel)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = rel
	}
	resolve := func(x ast.Expr) (typeKey, bool) {
		if s, ok := x.(*ast.StarExpr); ok {
			x = s.X
		}
		if ix, ok := x.(*ast.IndexExpr); ok {
			x = ix.X
		}
		switch x := x.(type) {
		case *ast.Ident:
			return typeKey{dir, x.Name}, true
		case *ast.SelectorExpr:
			if pkg, ok := x.X.(*ast.Ident); ok && imports[pkg.Name] != "" {
				return typeKey{imports[pkg.Name], x.Sel.Name}, true
			}
		}
		return typeKey{}, false
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil || len(decl.Recv.List) == 0 {
				continue
			}
			if k, ok := resolve(decl.Recv.List[0].Type); ok {
				d.methods[k] = append(d.methods[k], decl.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				d.addType(typeKey{dir, ts.Name.Name}, ts.Type, resolve)
			}
		}
	}
	return nil
}

func (d *typeDecls) addType(k typeKey, t ast.Expr, resolve func(ast.Expr) (typeKey, bool)) {
	if _, ok := d.embeds[k]; !ok {
		d.embeds[k] = nil
	}
	switch t := t.(type) {
	case *ast.StructType:
		for _, f := range t.Fields.List {
			if len(f.Names) > 0 {
				continue
			}
			if e, ok := resolve(f.Type); ok {
				d.embeds[k] = append(d.embeds[k], e)
			}
		}
	case *ast.InterfaceType:
		for _, f := range t.Methods.List {
			if len(f.Names) > 0 {
				for _, n := range f.Names {
					d.methods[k] = append(d.methods[k], n.Name)
				}
				continue
			}
			if e, ok := resolve(f.Type); ok {
				d.embeds[k] = append(d.embeds[k], e)
			}
		}
	}
}

// BroadTypes returns, sorted, one sentence for each type whose method set is over max, except
// those in known (type name as "internal/pkg.Type" -> why), and one for each entry of known that
// is no longer over max, so that the list cannot outlive the type it excuses.
func BroadTypes(sets map[string]int, max int, known map[string]string) []string {
	var out []string
	for name, n := range sets {
		_, excused := known[name]
		if n > max && !excused {
			out = append(out, fmt.Sprintf("%s has %d methods (promoted ones included), more than %d: split it by noun", name, n, max))
		}
	}
	for name := range known {
		if sets[name] <= max {
			out = append(out, fmt.Sprintf("%s has %d methods now, not more than %d: remove it from the known broad types", name, sets[name], max))
		}
	}
	slices.Sort(out)
	return out
}

// moduleName reads the module path from root/go.mod.
func moduleName(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s/go.mod names no module", root)
}
