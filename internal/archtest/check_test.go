package archtest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleDoc is a small architecture page in the format of docs/architecture.md.
const sampleDoc = `# Title

## Layers
Prose.

1. ` + "`base`" + `: types.
2. ` + "`core`" + `: deciders.
3. ` + "`top`" + `: the rest.

## Packages
| package | layer | holds | imports |
|---|---|---|---|
| ` + "`internal/job`" + ` | base | jobs; a cell with an escaped \| pipe | std |
| ` + "`internal/spec`" + ` | core | specs | job |
| ` + "`internal/cli`" + ` | top | commands | ` + "`spec`, internal/job" + ` |
| ` + "`cmd/hangar`" + ` | top | main | cli |

## Next
| not | the | package | table |
`

func TestParseDoc(t *testing.T) {
	got, err := ParseDoc("arch.md", sampleDoc)
	if err != nil {
		t.Fatal(err)
	}
	want := Doc{
		File: "arch.md",
		Layers: []Layer{
			{Name: "base", Rank: 1, Line: 6}, {Name: "core", Rank: 2, Line: 7}, {Name: "top", Rank: 3, Line: 8},
		},
		Rows: []Row{
			{Package: "internal/job", Layer: "base", Line: 13},
			{Package: "internal/spec", Layer: "core", Imports: []string{"internal/job"}, Line: 14},
			{Package: "internal/cli", Layer: "top", Imports: []string{"internal/job", "internal/spec"}, Line: 15},
			{Package: "cmd/hangar", Layer: "top", Imports: []string{"internal/cli"}, Line: 16},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseDoc (-want +got):\n%s", diff)
	}
}

// A page the check cannot read is refused with the line and the format it expects.
func TestParseDocRefusesMalformedPages(t *testing.T) {
	replace := func(old, new string) string {
		if !strings.Contains(sampleDoc, old) {
			t.Fatalf("sampleDoc lacks %q", old)
		}
		return strings.Replace(sampleDoc, old, new, 1)
	}
	tests := []struct {
		name, text, want string
	}{
		{"no layers", replace("## Layers", "## Strata"), `arch.md: no "## Layers" section`},
		{"layers out of order", replace("2. `core`", "3. `core`"), "arch.md:7: layer `core` is numbered 3; number the layers 1, 2, 3... from the bottom"},
		{"layer twice", replace("3. `top`", "3. `base`"), "arch.md:8: layer `base` is declared twice"},
		{"old header", replace("| package | layer | holds | imports |", "| package | holds | imports |"),
			`arch.md:11: the package table's header is "| package | holds | imports |"; it must be | package | layer | holds | imports |`},
		{"two packages in a row", replace("| `internal/spec` |", "| `internal/spec`, `internal/x` |"),
			"arch.md:14: package cell \"`internal/spec`, `internal/x`\" must name one package in backticks, like `internal/job` (one row per package)"},
		{"missing layer cell", replace("| `internal/spec` | core | specs | job |", "| `internal/spec` | specs | job |"),
			"arch.md:14: a row of the package table has 3 cells; it must have 4: | package | layer | holds | imports |"},
		{"std with others", replace("| specs | job |", "| specs | std, job |"), `arch.md:14: row internal/spec: imports "std, job": std stands alone`},
		{"empty imports", replace("| specs | job |", "| specs |  |"), "arch.md:14: row internal/spec: the imports cell is empty; write std"},
		{"brace shorthand", replace("| specs | job |", "| specs | provider/{local,command} |"),
			"arch.md:14: row internal/spec: imports \"provider/{local,command}\": expected internal packages relative to internal/"},
		{"empty layer", replace("| `internal/spec` | core |", "| `internal/spec` |  |"), "arch.md:14: row internal/spec has no layer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDoc("arch.md", tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseDoc error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	truth := []Package{
		{Path: "internal/job"},
		{Path: "internal/spec", Imports: []string{"internal/job"}},
		{Path: "internal/cli", Imports: []string{"internal/spec", "internal/job"}},
		{Path: "cmd/hangar", Imports: []string{"internal/cli"}},
	}
	with := func(edit func([]Package) []Package) []Package {
		c := make([]Package, len(truth))
		for i, p := range truth {
			c[i] = Package{Path: p.Path, Imports: append([]string(nil), p.Imports...)}
		}
		return edit(c)
	}
	tests := []struct {
		name  string
		doc   string
		pkgs  []Package
		known []Exception
		want  []string
	}{
		{name: "true page", doc: sampleDoc, pkgs: truth},
		{
			name: "an import that runs up",
			doc:  sampleDoc,
			pkgs: with(func(p []Package) []Package {
				p[1].Imports = append(p[1].Imports, "internal/cli")
				return p
			}),
			want: []string{
				"arch.md:14: row internal/spec lists imports job; the code imports cli, job (missing: cli): write `cli, job` in its imports column",
				`internal/spec imports internal/cli, which is above it: internal/spec is in layer core (2), internal/cli in layer top (3) (arch.md, "## Layers"); move what internal/spec needs down to layer core or below, or move internal/spec up`,
			},
		},
		{
			name: "a known exception is tolerated",
			doc:  strings.Replace(sampleDoc, "| specs | job |", "| specs | cli, job |", 1),
			pkgs: with(func(p []Package) []Package {
				p[1].Imports = append(p[1].Imports, "internal/cli")
				return p
			}),
			known: []Exception{{From: "internal/spec", To: "internal/cli", Why: "issue 0"}},
		},
		{
			name:  "a known exception that is gone",
			doc:   sampleDoc,
			pkgs:  truth,
			known: []Exception{{From: "internal/spec", To: "internal/cli", Why: "issue 0"}},
			want: []string{
				"the known exception internal/spec → internal/cli (issue 0) no longer runs up the layers: delete it from the known exceptions of internal/archtest",
			},
		},
		{
			name: "a wrong row",
			doc:  strings.Replace(sampleDoc, "| commands | `spec`, internal/job |", "| commands | spec, store |", 1),
			pkgs: truth,
			want: []string{
				"arch.md:15: row internal/cli lists imports spec, store; the code imports job, spec (missing: job; not imported: store): write `job, spec` in its imports column",
			},
		},
		{
			name: "a package without a row, a row without a package",
			doc:  strings.Replace(sampleDoc, "`internal/spec`", "`internal/specs`", 1),
			pkgs: truth,
			want: []string{
				"arch.md: no row for package internal/spec; add the row \"| `internal/spec` | <layer> | <what it holds> | job |\" to the table under \"## Packages\"",
				"arch.md:14: row internal/specs names no package of this module (go list ./...); remove the row or correct its path",
			},
		},
		{
			name: "an undeclared layer",
			doc:  strings.Replace(sampleDoc, "| `internal/spec` | core |", "| `internal/spec` | middle |", 1),
			pkgs: truth,
			want: []string{
				`arch.md:14: row internal/spec is in layer "middle", which is not declared under "## Layers" (declared, bottom first: base, core, top)`,
			},
		},
		{
			name: "a repeated row",
			doc:  strings.Replace(sampleDoc, "| `cmd/hangar` | top | main | cli |", "| `cmd/hangar` | top | main | cli |\n| `cmd/hangar` | top | again | cli |", 1),
			pkgs: truth,
			want: []string{"arch.md:17: row cmd/hangar repeats the row at line 16; keep one row per package"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := ParseDoc("arch.md", tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			got := Check(doc, tt.pkgs, tt.known)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}
