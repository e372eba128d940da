package archtest

import (
	"fmt"
	"slices"
	"strings"
)

// Package is one package of the module as the go tool sees it.
type Package struct {
	Path    string   // module-relative: internal/job, cmd/hangar
	Imports []string // module-relative internal packages its non-test code imports
}

// Exception is an import that runs up the layers and is known, with why it is tolerated and
// where its removal is tracked.
type Exception struct {
	From, To string // module-relative package paths
	Why      string
}

// Check compares the document with the packages and returns what to fix, one sentence each,
// sorted; none means the document is true.
func Check(doc Doc, pkgs []Package, known []Exception) []string {
	var out []string
	rows := map[string]Row{}
	for _, r := range doc.Rows {
		if first, dup := rows[r.Package]; dup {
			out = append(out, fmt.Sprintf("%s:%d: row %s repeats the row at line %d; keep one row per package", doc.File, r.Line, r.Package, first.Line))
			continue
		}
		rows[r.Package] = r
	}
	out = append(out, checkRows(doc, rows, pkgs)...)
	out = append(out, checkLayers(doc, rows, pkgs, known)...)
	slices.Sort(out)
	return out
}

// checkRows finds packages without a row, rows without a package, and imports columns that
// differ from the code.
func checkRows(doc Doc, rows map[string]Row, pkgs []Package) []string {
	var out []string
	real := map[string]bool{}
	for _, p := range pkgs {
		real[p.Path] = true
		r, ok := rows[p.Path]
		imports := sortedCopy(p.Imports)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: no row for package %s; add the row \"| `%s` | <layer> | <what it holds> | %s |\" to the table under %q",
				doc.File, p.Path, p.Path, importsCell(imports), packagesHeading))
		case !slices.Equal(r.Imports, imports):
			out = append(out, fmt.Sprintf("%s:%d: row %s lists imports %s; the code imports %s%s: write `%s` in its imports column",
				doc.File, r.Line, p.Path, importsCell(r.Imports), codeImports(imports), difference(r.Imports, imports), importsCell(imports)))
		}
	}
	for _, r := range doc.Rows {
		if !real[r.Package] {
			out = append(out, fmt.Sprintf("%s:%d: row %s names no package of this module (go list ./...); remove the row or correct its path",
				doc.File, r.Line, r.Package))
		}
	}
	return out
}

// checkLayers finds rows naming an undeclared layer, imports that run up the layers, and
// known exceptions that no longer happen.
func checkLayers(doc Doc, rows map[string]Row, pkgs []Package, known []Exception) []string {
	var out []string
	layers := map[string]Layer{}
	var names []string
	for _, l := range doc.Layers {
		layers[l.Name] = l
		names = append(names, l.Name)
	}
	for _, r := range doc.Rows {
		if _, ok := layers[r.Layer]; !ok {
			out = append(out, fmt.Sprintf("%s:%d: row %s is in layer %q, which is not declared under %q (declared, bottom first: %s)",
				doc.File, r.Line, r.Package, r.Layer, layersHeading, strings.Join(names, ", ")))
		}
	}
	used := map[Exception]bool{}
	for _, p := range pkgs {
		from, ok := layers[rows[p.Path].Layer]
		if !ok {
			continue // no row, or an undeclared layer: reported above
		}
		for _, imp := range sortedCopy(p.Imports) {
			to, ok := layers[rows[imp].Layer]
			if !ok || to.Rank <= from.Rank {
				continue
			}
			if e, ok := findException(known, p.Path, imp); ok {
				used[e] = true
				continue
			}
			out = append(out, fmt.Sprintf("%s imports %s, which is above it: %s is in layer %s (%d), %s in layer %s (%d) (%s, %q); "+
				"move what %s needs down to layer %s or below, or move %s up",
				p.Path, imp, p.Path, from.Name, from.Rank, imp, to.Name, to.Rank, doc.File, layersHeading, p.Path, from.Name, p.Path))
		}
	}
	for _, e := range known {
		if !used[e] {
			out = append(out, fmt.Sprintf("the known exception %s → %s (%s) no longer runs up the layers: delete it from the known exceptions of internal/archtest",
				e.From, e.To, e.Why))
		}
	}
	return out
}

func findException(known []Exception, from, to string) (Exception, bool) {
	for _, e := range known {
		if e.From == from && e.To == to {
			return e, true
		}
	}
	return Exception{}, false
}

// importsCell writes imports as the table's imports column does.
func importsCell(imports []string) string {
	if len(imports) == 0 {
		return stdCell
	}
	short := make([]string, len(imports))
	for i, p := range imports {
		short[i] = strings.TrimPrefix(p, "internal/")
	}
	return strings.Join(short, ", ")
}

// codeImports says what the code imports, in words where it is nothing.
func codeImports(imports []string) string {
	if len(imports) == 0 {
		return "no internal package"
	}
	return importsCell(imports)
}

// difference says what the row lacks and what it lists in vain, e.g. " (missing: api; not imported: store)".
func difference(listed, real []string) string {
	var missing, extra []string
	for _, p := range real {
		if !slices.Contains(listed, p) {
			missing = append(missing, p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(real, p) {
			extra = append(extra, p)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing: "+importsCell(missing))
	}
	if len(extra) > 0 {
		parts = append(parts, "not imported: "+importsCell(extra))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
