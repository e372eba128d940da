package archtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLinksAndAnchors(t *testing.T) {
	text := "# Title\n" +
		"See [the schema](docs/schema.md#jobs) and ![a picture](img/a.png \"title\").\n" +
		"Not `[code](x.md)`, and not in a fence:\n" +
		"```\n[fenced](y.md)\n```\n" +
		"## Slurm clusters (`type: slurm`)\n" +
		"## Jobs\n## Jobs\n<a id=\"short\"></a>\n"
	wantLinks := []Link{{Target: "docs/schema.md#jobs", Line: 2}, {Target: "img/a.png", Line: 2}}
	if diff := cmp.Diff(wantLinks, Links(text)); diff != "" {
		t.Errorf("Links (-want +got):\n%s", diff)
	}
	wantAnchors := map[string]bool{"title": true, "slurm-clusters-type-slurm": true, "jobs": true, "jobs-1": true, "short": true}
	if diff := cmp.Diff(wantAnchors, Anchors(text)); diff != "" {
		t.Errorf("Anchors (-want +got):\n%s", diff)
	}
}

// Every relative link of the project's Markdown (README, docs/, the top-level records) names a
// file inside the repository, and a heading of it when it names one: the documentation a user
// reads is the repository's own, and its links do not rot.
func TestDocLinksResolveInsideTheRepo(t *testing.T) {
	root, err := ModuleRoot(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pattern := range []string{"*.md", "docs/*.md", "docs/*/*.md", "examples/*/*.md", "examples/*/*/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 3 {
		t.Fatalf("found %d Markdown files under %s", len(files), root)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, l := range Links(string(text)) {
			if msg := checkLink(root, f, l.Target); msg != "" {
				t.Errorf("%s:%d: link %s: %s", rel, l.Line, l.Target, msg)
			}
		}
	}
}

// checkLink says what is wrong with a link target of file, or "" when nothing is.
func checkLink(root, file, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, anchor, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
	}
	if rel, err := filepath.Rel(root, dest); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "points outside the repository; link a file in it (docs/ holds the references)"
	}
	if _, err := os.Stat(dest); err != nil {
		return "no such file in the repository"
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	text, err := os.ReadFile(dest)
	if err != nil {
		return err.Error()
	}
	if !Anchors(string(text))[anchor] {
		return "no heading of " + filepath.Base(dest) + " has the anchor #" + anchor
	}
	return ""
}
