package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// dataKeys are the keys --set may create in a data file.
var dataKeys = []string{"name", "version", "path", "type", "description", "tags.*", "properties.*", "datastore"}

// dataReadOnly are fields `az ml data show -o yaml` prints and a data file may carry back.
var dataReadOnly = []string{"id", "creation_context", "latest_version", "auto_delete_setting"}

// ParseDataFile reads a data asset YAML (the Azure ML data schema, data.schema.json) with the
// same rules as ParseJobFile: strict, every problem with its field path, --set applied first.
func ParseDataFile(file string, sets []string) (*dataset.Spec, []string, error) {
	return parseFile(ParseData, file, sets)
}

// ParseData is ParseDataFile for YAML already read; local paths resolve against baseDir.
func ParseData(file string, data []byte, baseDir string, sets []string, opts ...FileOption) (*dataset.Spec, []string, error) {
	d, root := begin(file, data, baseDir, sets, dataKeys, opts...)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	var s dataset.Spec
	var pathNode *yaml.Node
	str := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) { *dst = d.str(n, p) }
	}
	fs := fields{
		"$schema":   nil,
		"name":      str(&s.Name),
		"version":   func(n *yaml.Node, p string) { s.Version = d.assets.assetVersion(n, p, dataset.Kind.ParseVersion) },
		"type":      func(n *yaml.Node, p string) { s.Type = d.enum(n, p, dataset.Types...) },
		"path":      func(n *yaml.Node, p string) { pathNode = n },
		"datastore": func(n *yaml.Node, p string) { s.Datastore = d.assets.uploadDatastore(n, p) },
	}
	d.meta(fs, &s.Meta)
	for _, f := range dataReadOnly {
		fs[f] = func(n *yaml.Node, p string) { d.warnf(n, p, "read-only field ignored") }
	}
	got := d.mapping(root, "", fs)
	switch {
	case got["name"] == nil:
		d.required(nil, "name")
	case dataset.Kind.CheckName(s.Name) != nil:
		d.expected(got["name"], "name", "a name of letters, digits, _, . and - (at most 255)")
	}
	if s.Type == "" && got["type"] == nil {
		s.Type = dataset.URIFolder
	}
	if pathNode == nil {
		d.required(nil, "path")
	} else {
		s.Path = d.assets.dataAssetPath(pathNode, "path", s.Type)
	}
	return result(d, &s)
}

// assetVersion decodes a versioned asset's version: a string, as Azure's are (version: 0.0.1,
// version: "1", version: v2); YAML's own reading of the text does not matter (0.10 stays 0.10),
// and an integer is given in its canonical form (007 is 7).
func (d *assetDecoder) assetVersion(n *yaml.Node, path string, parse func(string) (string, error)) string {
	s, ok := d.scalar(n, path, "a version (a string or an integer)")
	if !ok {
		return ""
	}
	v, err := parse(s.Value)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("version %q: ", s.Value))
		if strings.HasPrefix(msg, "expected") {
			msg += fmt.Sprintf(", got %q", s.Value)
		}
		d.errorf(s, path, "%s", msg)
		return ""
	}
	return v
}

// uploadDatastore decodes `datastore:`, where a local path is uploaded: workspaceblobstore
// (with or without azureml:), the only datastore that takes uploads.
func (d *assetDecoder) uploadDatastore(n *yaml.Node, path string) string {
	s := strings.TrimSpace(d.str(n, path))
	name := s
	if len(name) > len("azureml:") && strings.EqualFold(name[:len("azureml:")], "azureml:") {
		name = name[len("azureml:"):]
	}
	if name != datastore.WorkspaceBlobStore {
		d.errorf(n, path, "%s: uploads go to %s, the workspace's own datastore", quote(s), datastore.WorkspaceBlobStore)
		return ""
	}
	return name
}

// dataAssetPath decodes a data asset's path: a local file or folder (made absolute; it must exist;
// an mltable folder must hold its MLTable file), a job output, a datastore path or an http(s)
// URL, or a direct object-store URI (s3://, gs://, wasbs://, abfss://).
func (d *assetDecoder) dataAssetPath(n *yaml.Node, path, typ string) string {
	s := strings.TrimSpace(d.str(n, path))
	lower := strings.ToLower(s)
	switch {
	case s == "":
		d.expected(n, path, "a local path, azureml://jobs/<job>/outputs/<output>, azureml://datastores/<datastore>/paths/<path> or an http(s) URL")
		return ""
	case strings.HasPrefix(lower, "azureml://jobs/"), strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return s
	case datastore.IsURI(s):
		if _, err := datastore.ParseURI(s); err != nil {
			d.errorf(n, path, "%v", err)
			return ""
		}
		return s
	case datastore.IsObjectURI(s):
		if _, err := datastore.ParseObjectURI(s); err != nil {
			d.errorf(n, path, "%v", err)
			return ""
		}
		return s
	case isURI(s):
		d.errorf(n, path, "%s is not supported by this workspace: give a local file or folder, a job output, an azureml://datastores/<datastore>/paths/<path> URI, an s3://, gs://, wasbs:// or abfss:// URI, or an http(s) URL", quote(s))
		return ""
	}
	p, info, ok := d.stat(n, path, s)
	if !ok {
		return ""
	}
	if typ == dataset.MLTable {
		if !info.IsDir() {
			d.errorf(n, path, "type mltable: %s is a file; an mltable is a folder holding an %s file", s, dataset.MLTableFile)
			return ""
		}
		if _, err := os.Stat(filepath.Join(p, dataset.MLTableFile)); err != nil {
			d.errorf(n, path, "type mltable: %s has no %s file (an mltable folder holds an MLTable file describing how to read its data)", s, dataset.MLTableFile)
			return ""
		}
	}
	if typ == dataset.URIFile && info.IsDir() {
		d.errorf(n, path, "type uri_file: %s is a folder (use type: uri_folder)", s)
		return ""
	}
	if typ == dataset.URIFolder && !info.IsDir() {
		d.errorf(n, path, "type uri_folder: %s is a file (use type: uri_file)", s)
		return ""
	}
	return p
}
