package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A command component's additional_includes (Azure's field) are files and folders, relative to
// the component file's folder, that its code snapshot holds at the root under their own names,
// beside the code folder's files: a folder shared by several components (common_src) is listed
// rather than copied into each. The CLI adds them when it uploads the code (snapshot.ScanCode).
// They are files of the user's that the snapshot publishes to the workspace, so, like the other
// files a spec reads, they must lie inside the spec's folder or the one --spec-root names.

// additionalIncludes decodes additional_includes: each entry an existing file or folder,
// returned absolute, two never of one name.
func (d *jobDecoder) additionalIncludes(n *yaml.Node, path string) []string {
	var out []string
	names := map[string]string{}
	for ip, item := range d.list(n, path, "a list of files and folders") {
		item = resolve(item)
		if item.Kind == yaml.MappingNode {
			d.errorf(item, ip, "Azure DevOps artifacts are not supported; list a local file or folder")
			continue
		}
		abs, ok := d.include(item, ip)
		if !ok {
			continue
		}
		name := filepath.Base(abs)
		if prev, dup := names[name]; dup {
			d.errorf(item, ip, "%s and %s would both be %s at the root of the code snapshot", prev, item.Value, name)
			continue
		}
		names[name] = item.Value
		out = append(out, abs)
	}
	return out
}

// include decodes one entry of additional_includes.
func (d *jobDecoder) include(n *yaml.Node, path string) (string, bool) {
	written := strings.TrimSpace(d.str(n, path))
	switch {
	case written == "":
		d.expected(n, path, "a local file or folder")
		return "", false
	case isURI(written):
		d.errorf(n, path, "expected a local file or folder, got URI %s", quote(written))
		return "", false
	}
	if abs := d.abs(localPath(written)); strings.HasSuffix(strings.ToLower(abs), ".zip") {
		if _, err := os.Stat(abs); err != nil && isDir(strings.TrimSuffix(abs, filepath.Ext(abs))) {
			d.errorf(n, path, "%s does not exist (Azure zips the folder %s into it; Hangar does not: list the folder)", written, strings.TrimSuffix(written, filepath.Ext(written)))
			return "", false
		}
	}
	abs, _, ok := d.stat(n, path, written)
	if !ok {
		return "", false
	}
	if filepath.Dir(abs) == abs {
		d.errorf(n, path, "%s is the root folder; list the files or folders under it", written)
		return "", false
	}
	if !d.confinedUpload(n, path, written, abs) {
		return "", false
	}
	return abs, true
}

// checkIncludes refuses an include whose name the code (a folder, or a single file) already
// has at its root, as Azure does.
func (d *jobDecoder) checkIncludes(n *yaml.Node, path, code string, includes []string) {
	if code == "" {
		return
	}
	for i, inc := range includes {
		name := filepath.Base(inc)
		clash := name == filepath.Base(code)
		if isDir(code) {
			_, err := os.Lstat(filepath.Join(code, name))
			clash = err == nil
		}
		if clash {
			d.errorf(itemNode(n, i), fmt.Sprintf("%s[%d]", path, i), "the code %s already has %s at its root", code, name)
		}
	}
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// itemNode is the i-th item of a sequence node, or n.
func itemNode(n *yaml.Node, i int) *yaml.Node {
	if n = resolve(n); n != nil && n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return n.Content[i]
	}
	return n
}
