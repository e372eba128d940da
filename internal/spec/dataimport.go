package spec

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// dataImportKeys are the keys --set may create in a data import file.
var dataImportKeys = []string{"name", "version", "type", "path", "description", "tags.*", "properties.*",
	"source.type", "source.query", "source.path", "source.connection"}

// DefaultImportPath is where an import is written when its file names no path.
const DefaultImportPath = "azureml://datastores/workspaceblobstore/paths/import/${{name}}"

// ParseDataImportFile reads a data import YAML (Azure's DataImport schema): a database source
// (query) into an mltable asset, or a file_system source (path) into a uri_folder one, through
// a connection (azureml:<name>), written at path in workspaceblobstore.
func ParseDataImportFile(file string, sets []string) (*dataset.ImportSpec, []string, error) {
	data, err := readSpec(file)
	if err != nil {
		return nil, nil, err
	}
	return ParseDataImport(file, data, sets)
}

// ParseDataImport is ParseDataImportFile for YAML already read.
func ParseDataImport(file string, data []byte, sets []string) (*dataset.ImportSpec, []string, error) {
	d, root := begin(file, data, ".", sets, dataImportKeys)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	var s dataset.ImportSpec
	var src *yaml.Node
	fs := fields{
		"$schema": nil,
		"name":    func(n *yaml.Node, p string) { s.Name = strings.TrimSpace(d.str(n, p)) },
		"version": func(n *yaml.Node, p string) { s.Version = d.assets.assetVersion(n, p, dataset.Kind.ParseVersion) },
		"type":    func(n *yaml.Node, p string) { s.Type = d.enum(n, p, dataset.MLTable, dataset.URIFolder) },
		"path":    func(n *yaml.Node, p string) { s.Path = importPath(d, n, p) },
		"source":  func(n *yaml.Node, p string) { src = n; importSource(d, n, p, &s.Source) },
	}
	d.meta(fs, &s.Meta)
	got := d.mapping(root, "", fs)
	switch {
	case got["name"] == nil:
		d.required(nil, "name")
	case dataset.Kind.CheckName(s.Name) != nil:
		d.expected(got["name"], "name", "a name of letters, digits, _, . and - (at most 255)")
	}
	if got["type"] == nil {
		d.required(nil, "type")
	}
	if got["path"] == nil {
		s.Path = DefaultImportPath
	}
	if src == nil {
		d.required(nil, "source")
	}
	switch {
	case s.Source.Type == dataset.SourceDatabase && s.Type == dataset.URIFolder:
		d.errorf(got["type"], "type", "a database source is imported as a table: use type mltable")
	case s.Source.Type == dataset.SourceFileSystem && s.Type == dataset.MLTable:
		d.errorf(got["type"], "type", "a file_system source is imported as files: use type uri_folder")
	}
	return result(d, &s)
}

// importPath decodes an import's path: a workspaceblobstore datastore path (${{name}} is the
// asset's name).
func importPath(d *decoder, n *yaml.Node, path string) string {
	s := strings.TrimSpace(d.str(n, path))
	u, err := datastore.ParseURI(strings.ReplaceAll(s, "${{name}}", "x"))
	switch {
	case err != nil:
		d.errorf(n, path, "%v", err)
		return ""
	case u.Datastore != datastore.WorkspaceBlobStore:
		d.errorf(n, path, "%s: an import is written to %s (azureml://datastores/%s/paths/<path>)", s, datastore.WorkspaceBlobStore, datastore.WorkspaceBlobStore)
		return ""
	case u.Path == "":
		d.expected(n, path, "a path inside the datastore (azureml://datastores/workspaceblobstore/paths/<path>)")
		return ""
	}
	return s
}

// importSource decodes source: {type, query | path, connection}.
func importSource(d *decoder, n *yaml.Node, path string, src *dataset.ImportSource) {
	got := d.mapping(n, path, fields{
		"type": func(n *yaml.Node, p string) {
			src.Type = d.enum(n, p, dataset.SourceDatabase, dataset.SourceFileSystem)
		},
		"query":      func(n *yaml.Node, p string) { src.Query = strings.TrimSpace(d.text(n, p, "a query")) },
		"path":       func(n *yaml.Node, p string) { src.Path = strings.TrimSpace(d.str(n, p)) },
		"connection": func(n *yaml.Node, p string) { src.Connection = connection.Ref(d.str(n, p)) },
	})
	for _, f := range []string{"type", "connection"} {
		if got[f] == nil {
			d.required(n, join(path, f))
		}
	}
	if got["connection"] != nil {
		if err := connection.CheckName(src.Connection); err != nil {
			d.errorf(got["connection"], join(path, "connection"), "%v (azureml:<connection>)", err)
		}
	}
	switch src.Type {
	case dataset.SourceDatabase:
		if src.Query == "" {
			d.errorf(n, join(path, "query"), "required (a database source runs one query)")
		}
		if got["path"] != nil {
			d.errorf(got["path"], join(path, "path"), "a database source reads a query, not a path")
		}
	case dataset.SourceFileSystem:
		if src.Path == "" {
			d.errorf(n, join(path, "path"), "required (a file_system source copies a path of the connection's bucket)")
		}
		if got["query"] != nil {
			d.errorf(got["query"], join(path, "query"), "a file_system source copies a path, not a query")
		}
	}
}
