package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func link(p, target string) Entry {
	return Entry{Path: p, Type: TypeSymlink, Mode: 0o777, Target: target}
}
func dir(p string) Entry { return Entry{Path: p, Type: TypeDir, Mode: 0o755} }

// Links that leave the tree are left out, with what was wrong with each; links that stay inside
// are kept as they are, and so is everything else.
func TestWithoutEscapingLinks(t *testing.T) {
	file := Entry{Path: "outputs/model.bin", Type: TypeFile, Hash: emptyHash, Mode: 0o644}
	tests := []struct {
		name        string
		entries     []Entry
		wantKept    []string
		wantDropped []string // "path -> target (loop)"
	}{
		{"inside links stay", []Entry{dir("outputs"), file, link("outputs/latest", "model.bin"), link("top", "outputs/../outputs")},
			[]string{"outputs", "outputs/latest", "outputs/model.bin", "top"}, nil},
		{"absolute", []Entry{dir("logs"), link("logs/l", "/etc/passwd")}, []string{"logs"}, []string{"logs/l -> /etc/passwd"}},
		{"climbs out", []Entry{dir("outputs"), file, link("outputs/up", "../../x")},
			[]string{"outputs", "outputs/model.bin"}, []string{"outputs/up -> ../../x"}},
		{"through another link", []Entry{dir("a"), dir("a/b"), link("a/b/c", ".."), link("d", "a/b/c/../../..")},
			[]string{"a", "a/b", "a/b/c"}, []string{"d -> a/b/c/../../.."}},
		{"a loop", []Entry{link("x", "y"), link("y", "x")}, []string{}, []string{"x -> y (loop)", "y -> x (loop)"}},
		{"through a link that leaves", []Entry{dir("d"), link("d/b", "/abs/e/f"), link("a", "d/b/../..")},
			[]string{"d"}, []string{"a -> d/b/../..", "d/b -> /abs/e/f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Manifest{Entries: tt.entries}
			before := len(m.Entries)
			got, dropped := WithoutEscapingLinks(m)
			kept := []string{}
			for _, e := range got.Entries {
				kept = append(kept, e.Path)
			}
			var gone []string
			for _, le := range dropped {
				s := le.Path + " -> " + le.Target
				if le.Loop {
					s += " (loop)"
				}
				gone = append(gone, s)
			}
			if diff := cmp.Diff(tt.wantKept, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDropped, gone); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
			if len(m.Entries) != before {
				t.Errorf("the manifest given was changed")
			}
			if err := checkSymlinks(got.Entries); err != nil {
				t.Errorf("what is kept still has a bad link: %v", err)
			}
		})
	}
}
