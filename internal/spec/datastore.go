package spec

import (
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// datastoreKeys are the keys --set may create in a datastore file.
var datastoreKeys = []string{"name", "type", "path", "description", "tags.*", "computes"}

// ParseDatastoreFile reads a datastore YAML. Hangar takes its own type local_folder (a folder on
// a shared filesystem: path, and computes, the targets whose nodes mount it); Azure's storage
// types are refused with the reason.
func ParseDatastoreFile(file string, sets []string) (*datastore.Datastore, []string, error) {
	data, err := readSpec(file)
	if err != nil {
		return nil, nil, err
	}
	return ParseDatastore(file, data, sets)
}

// ParseDatastore is ParseDatastoreFile for YAML already read.
func ParseDatastore(file string, data []byte, sets []string) (*datastore.Datastore, []string, error) {
	d, root := begin(file, data, filepath.Dir(file), sets, datastoreKeys)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	var ds datastore.Datastore
	if t := lookup(root, "type"); t != nil {
		ds.Type = strings.ToLower(strings.TrimSpace(d.str(t, "type")))
		if slices.Contains(datastore.CloudTypes, ds.Type) {
			d.errorf(t, "type", "%v", datastore.CloudTypeError(ds.Type))
			return nil, d.warnings, d.errs.err()
		}
		if ds.Type != datastore.TypeLocalFolder {
			d.expected(t, "type", datastore.TypeLocalFolder+" (a folder on a shared filesystem)")
		}
	}
	got := d.mapping(root, "", fields{
		"$schema":     nil,
		"name":        func(n *yaml.Node, p string) { ds.Name = d.str(n, p) },
		"type":        nil,
		"description": func(n *yaml.Node, p string) { ds.Description = d.str(n, p) },
		"tags":        func(n *yaml.Node, p string) { ds.Tags = d.stringMap(n, p) },
		"path":        func(n *yaml.Node, p string) { ds.Path = d.assets.sharedFolder(n, p) },
		"computes":    func(n *yaml.Node, p string) { ds.Computes = d.stringList(n, p) },
	})
	switch {
	case got["name"] == nil:
		d.required(nil, "name")
	case datastore.CheckName(ds.Name) != nil:
		d.expected(got["name"], "name", "a name of letters, digits and _ (at most 255)")
	case ds.Name == datastore.WorkspaceBlobStore:
		d.errorf(got["name"], "name", "%s is the workspace's own datastore and cannot be replaced", ds.Name)
	}
	if got["type"] == nil {
		d.required(nil, "type")
	}
	if got["path"] == nil {
		d.required(nil, "path")
	}
	return result(d, &ds)
}

// sharedFolder decodes a local_folder's path: absolute and clean, because every node that
// mounts the folder must find it at that same path; it is not resolved against the file.
func (d *assetDecoder) sharedFolder(n *yaml.Node, path string) string {
	s := strings.TrimSpace(d.str(n, path))
	if !filepath.IsAbs(s) || filepath.Clean(s) != s {
		d.expected(n, path, "a clean absolute folder path (the same on every node that mounts it)")
		return ""
	}
	return s
}
