package spec

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/model"
)

// modelKeys are the keys --set may create in a model file.
var modelKeys = []string{"name", "version", "path", "type", "description", "tags.*", "properties.*", "stage"}

// modelReadOnly are fields `az ml model show -o yaml` prints and a model file may carry back.
var modelReadOnly = []string{"id", "creation_context", "job_name", "latest_version"}

// ParseModelFile reads a model YAML (the Azure ML model schema) with the same rules as
// ParseJobFile: strict, every problem with its field path, --set applied first.
func ParseModelFile(file string, sets []string) (*model.Spec, []string, error) {
	return parseFile(ParseModel, file, sets)
}

// ParseModel is ParseModelFile for YAML already read; local paths resolve against baseDir.
func ParseModel(file string, data []byte, baseDir string, sets []string, opts ...FileOption) (*model.Spec, []string, error) {
	d, root := begin(file, data, baseDir, sets, modelKeys, opts...)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	var m model.Spec
	var pathNode *yaml.Node
	str := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) { *dst = d.str(n, p) }
	}
	fs := fields{
		"$schema": nil,
		"name":    str(&m.Name),
		"version": func(n *yaml.Node, p string) { m.Version = d.assets.modelVersion(n, p) },
		"type":    func(n *yaml.Node, p string) { m.Type = d.enum(n, p, model.Types...) },
		"path":    func(n *yaml.Node, p string) { pathNode, m.Path = n, d.assets.modelPath(n, p) },
		"stage":   str(&m.Stage),
		// flavors describes an MLflow model's MLmodel file, which the files themselves carry.
		"flavors":   nil,
		"datastore": func(n *yaml.Node, p string) { d.warnf(n, p, "ignored: a model's files are kept in the workspace") },
	}
	d.meta(fs, &m.Meta)
	for _, f := range modelReadOnly {
		fs[f] = func(n *yaml.Node, p string) { d.warnf(n, p, "read-only field ignored") }
	}
	var legacy *yaml.Node
	fs["local_path"] = func(n *yaml.Node, p string) { legacy = n }
	got := d.mapping(root, "", fs)
	if legacy != nil {
		if pathNode != nil {
			d.errorf(legacy, "local_path", "give path or local_path (legacy), not both")
		} else {
			d.warnf(legacy, "local_path", "a legacy field; write path: %s", legacy.Value)
			m.Path = d.assets.modelPath(legacy, "local_path")
		}
	}
	switch {
	case got["name"] == nil:
		d.required(nil, "name")
	case model.CheckName(m.Name) != nil:
		d.expected(got["name"], "name", "a name of letters, digits, _, . and - (at most 255)")
	}
	if pathNode == nil && legacy == nil {
		d.required(nil, "path")
	}
	if m.Type == "" && got["type"] == nil {
		m.Type = model.CustomModel
	}
	return result(d, &m)
}

// modelVersion decodes a model's version: a string, as Azure's (0.0.1, v2), or an integer.
func (d *assetDecoder) modelVersion(n *yaml.Node, path string) string {
	return d.assetVersion(n, path, model.ParseVersion)
}

// modelPath decodes a model's path: a local file or folder (made absolute; it must exist) or a
// job's output, azureml://jobs/<job>/outputs/<output>[/paths/<path>].
func (d *assetDecoder) modelPath(n *yaml.Node, path string) string {
	s := strings.TrimSpace(d.str(n, path))
	switch {
	case s == "":
		d.expected(n, path, "a local path or azureml://jobs/<job>/outputs/<output>")
		return ""
	case strings.HasPrefix(strings.ToLower(s), "azureml://jobs/"):
		return s
	case isURI(s):
		d.errorf(n, path, "%s is not supported by this workspace: give a local file or folder, or a job output (azureml://jobs/<job>/outputs/<output>[/paths/<path>])", quote(s))
		return ""
	}
	p, _, ok := d.stat(n, path, s)
	if !ok {
		return ""
	}
	return p
}
