package archtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Doc is what docs/architecture.md declares: the layers, bottom first, and the package table.
type Doc struct {
	File   string // as named in messages, e.g. docs/architecture.md
	Layers []Layer
	Rows   []Row
}

// Layer is one entry of the "## Layers" list; Rank 1 is the bottom.
type Layer struct {
	Name string
	Rank int
	Line int
}

// Row is one row of the "## Packages" table.
type Row struct {
	Package string   // module-relative path: internal/job, cmd/hangar
	Layer   string   // a Layer's Name
	Imports []string // module-relative internal paths, sorted; empty when the cell says std
	Line    int
}

// TableHeader is the header the package table must have, in this order.
var TableHeader = []string{"package", "layer", "holds", "imports"}

const (
	layersHeading   = "## Layers"
	packagesHeading = "## Packages"
	// stdCell is what the imports column says of a package that imports no internal package.
	stdCell = "std"
)

var (
	layerItem   = regexp.MustCompile("^(\\d+)\\.\\s+`([A-Za-z0-9_-]+)`")
	packageCell = regexp.MustCompile("^`((?:internal|cmd)(?:/[A-Za-z0-9._-]+)+)`$")
)

// ParseDoc reads the layers and the package table out of the architecture document's text. An
// error names the file and line and says what the format must be.
func ParseDoc(file, text string) (Doc, error) {
	d := Doc{File: file}
	lines := strings.Split(text, "\n")
	layers, err := parseLayers(file, lines)
	if err != nil {
		return d, err
	}
	rows, err := parseTable(file, lines)
	if err != nil {
		return d, err
	}
	d.Layers, d.Rows = layers, rows
	return d, nil
}

// section returns the index of the line after heading and the index where its section ends.
func section(lines []string, heading string) (start, end int, ok bool) {
	for i, l := range lines {
		if strings.TrimSpace(l) != heading {
			continue
		}
		end = len(lines)
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "## ") {
				end = j
				break
			}
		}
		return i + 1, end, true
	}
	return 0, 0, false
}

func parseLayers(file string, lines []string) ([]Layer, error) {
	start, end, ok := section(lines, layersHeading)
	if !ok {
		return nil, fmt.Errorf("%s: no %q section: declare the layers there, bottom first, as a numbered list (1. `name`: what it holds)", file, layersHeading)
	}
	var out []Layer
	seen := map[string]bool{}
	for i := start; i < end; i++ {
		m := layerItem.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		switch {
		case n != len(out)+1:
			return nil, fmt.Errorf("%s:%d: layer `%s` is numbered %d; number the layers 1, 2, 3... from the bottom", file, i+1, m[2], n)
		case seen[m[2]]:
			return nil, fmt.Errorf("%s:%d: layer `%s` is declared twice", file, i+1, m[2])
		}
		seen[m[2]] = true
		out = append(out, Layer{Name: m[2], Rank: n, Line: i + 1})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the %q section lists no layers; write them bottom first as a numbered list (1. `name`: what it holds)", file, layersHeading)
	}
	return out, nil
}

func parseTable(file string, lines []string) ([]Row, error) {
	start, end, ok := section(lines, packagesHeading)
	if !ok {
		return nil, fmt.Errorf("%s: no %q section with the package table", file, packagesHeading)
	}
	head := start
	for head < end && !strings.HasPrefix(strings.TrimSpace(lines[head]), "|") {
		head++
	}
	if head == end {
		return nil, fmt.Errorf("%s: the %q section has no table; its header must be %s", file, packagesHeading, headerLine())
	}
	if got := cells(lines[head]); !sameHeader(got) {
		return nil, fmt.Errorf("%s:%d: the package table's header is %q; it must be %s", file, head+1, strings.TrimSpace(lines[head]), headerLine())
	}
	var rows []Row
	for i := head + 2; i < end && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
		r, err := parseRow(file, i+1, lines[i])
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func parseRow(file string, line int, text string) (Row, error) {
	c := cells(text)
	if len(c) != len(TableHeader) {
		return Row{}, fmt.Errorf("%s:%d: a row of the package table has %d cells; it must have %d: %s (escape a | inside a cell as \\|)",
			file, line, len(c), len(TableHeader), headerLine())
	}
	m := packageCell.FindStringSubmatch(c[0])
	if m == nil {
		return Row{}, fmt.Errorf("%s:%d: package cell %q must name one package in backticks, like `internal/job` (one row per package)", file, line, c[0])
	}
	r := Row{Package: m[1], Layer: strings.Trim(c[1], "` "), Line: line}
	if r.Layer == "" {
		return Row{}, fmt.Errorf("%s:%d: row %s has no layer; name one of the layers under %q", file, line, r.Package, layersHeading)
	}
	imports, err := parseImports(c[3])
	if err != nil {
		return Row{}, fmt.Errorf("%s:%d: row %s: %v", file, line, r.Package, err)
	}
	r.Imports = imports
	return r, nil
}

// parseImports reads an imports cell: "std", or internal packages relative to internal/,
// separated by commas (backticks and an internal/ prefix are allowed).
func parseImports(cell string) ([]string, error) {
	cell = strings.TrimSpace(cell)
	if cell == stdCell {
		return nil, nil
	}
	if cell == "" {
		return nil, fmt.Errorf("the imports cell is empty; write %s when the package imports no internal package", stdCell)
	}
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(cell, ",") {
		name := strings.TrimPrefix(strings.Trim(strings.TrimSpace(part), "`"), "internal/")
		switch {
		case name == stdCell:
			return nil, fmt.Errorf("imports %q: %s stands alone (it means no internal imports)", cell, stdCell)
		case name == "" || strings.ContainsAny(name, " \t{}"):
			return nil, fmt.Errorf("imports %q: expected internal packages relative to internal/, separated by commas, like `api, backend/local`", cell)
		case seen[name]:
			return nil, fmt.Errorf("imports %q: %s is listed twice", cell, name)
		}
		seen[name] = true
		out = append(out, "internal/"+name)
	}
	return sortedCopy(out), nil
}

// cells splits a table line on the pipes that are not escaped, dropping the outer ones.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var out []string
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(line[i])
		}
	}
	return append(out, strings.TrimSpace(b.String()))
}

func sameHeader(got []string) bool {
	if len(got) != len(TableHeader) {
		return false
	}
	for i, h := range TableHeader {
		if !strings.EqualFold(got[i], h) {
			return false
		}
	}
	return true
}

func headerLine() string {
	return "| " + strings.Join(TableHeader, " | ") + " |"
}
