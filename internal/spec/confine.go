package spec

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The CLI reads some files a spec names and puts their text in the spec, where every reader
// of the workspace sees it: conda_file, requirements, component files (component:, trial:) and
// a compute instance's setup scripts. A spec from elsewhere (a repository, a colleague) must
// not be able to publish the user's own files that way (`conda_file: /etc/shadow`), so these
// reads stay inside the folder of the spec file, links resolved, or among the files the git
// repository holding the spec tracks (confine_git.go), unless the user names the
// path on the command line: in a --set, or under a wider folder given with --spec-root
// (docs/schema.md#files-a-spec-reads). Folders the CLI uploads (code, data and model paths,
// build contexts) are not confined: uploading them is what the spec asks for, and the CLI
// names each as it sends it. A component's additional_includes are confined: a component file
// lists them, and nothing on the command line names them.

// A FileOption changes where a spec's file references may be read from.
type FileOption func(*decoder)

// Root lets a spec read the files it names anywhere under dir (--spec-root), instead of only
// under its own folder.
func Root(dir string) FileOption {
	return func(d *decoder) {
		if dir != "" {
			d.root, d.rootWhat = realDir(dir), "the folder given with --spec-root"
		}
	}
}

// inherit gives a decoder of a file the spec names (a component) the root of the spec.
func (d *decoder) inherit(child *decoder) {
	child.root, child.rootWhat = d.root, d.rootWhat
}

// realDir is dir absolute with its links resolved (as far as it exists).
func realDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// within reports whether p is dir or under it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// confined checks that the file abs, which the spec names as written at path, lies under the
// decoder's root once its links are resolved; a path given with --set may lie anywhere.
func (d *decoder) confined(n *yaml.Node, path, written, abs string) bool {
	return d.confinedTo(n, path, written, abs, d.depth == 0)
}

// confinedUpload is confined for a path uploaded with the code (additional_includes), which
// --set cannot give: only --spec-root widens where it may lie.
func (d *decoder) confinedUpload(n *yaml.Node, path, written, abs string) bool {
	return d.confinedTo(n, path, written, abs, false)
}

func (d *decoder) confinedTo(n *yaml.Node, path, written, abs string, setHint bool) bool {
	if d.root == "" || d.fromSet[n] {
		return true
	}
	real := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		real = r
	}
	if within(d.root, real) || trackedBySpecRepo(d.baseDir, real) {
		return true
	}
	what := written
	if real != d.abs(localPath(written)) {
		what = fmt.Sprintf("%s (a link to %s)", written, real)
	}
	hint := "allow a wider folder with --spec-root DIR"
	if setHint {
		hint = fmt.Sprintf("give the path on the command line (--set %s=%s) or %s", join(d.prefix, path), written, hint)
	}
	d.errorf(n, path, "%s is outside %s, %s, and not a file the spec's git repository tracks: a spec reads files only there, so that a spec from elsewhere cannot publish your files to the workspace; %s",
		what, d.root, d.rootWhat, hint)
	return false
}
