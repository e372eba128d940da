package spec

import (
	"github.com/hangar-ml/hangar/internal/pattern"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/job"
)

var (
	envRef  = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_.-]*(:[A-Za-z0-9_.-]+|@[A-Za-z0-9_.-]+)?$`)
	envName = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`)
)

// ParseEnvironmentFile reads a standalone environment YAML (SPEC.md §6) with the same
// rules as ParseJobFile; name is required there.
func ParseEnvironmentFile(file string, sets []string, opts ...FileOption) (*job.Environment, []string, error) {
	return parseFile(ParseEnvironment, file, sets, opts...)
}

// ParseEnvironment is ParseEnvironmentFile for YAML already read.
func ParseEnvironment(file string, data []byte, baseDir string, sets []string, opts ...FileOption) (*job.Environment, []string, error) {
	d, root := begin(file, data, baseDir, sets, envKeys, opts...)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	var env job.Environment
	fs := d.assets.environmentFields(&env)
	fs["$schema"] = nil
	got := d.mapping(root, "", fs)
	d.assets.checkEnvironment(root, "", &env)
	switch {
	case got["name"] == nil:
		d.required(nil, "name")
	case !envName.MatchString(env.Name):
		d.expected(got["name"], "name", "a name of letters, digits, _, . and - (at most 255)")
	}
	if env.IsEmpty() && len(d.errs) == 0 {
		d.errorf(nil, "", "empty environment: give image, build, conda_file or requirements")
	}
	return result(d, &env)
}

// jobEnvironment decodes a job's `environment:`, a reference, an environment file (envfile.go)
// or an inline environment.
func (d *assetDecoder) jobEnvironment(n *yaml.Node, path string) job.Environment {
	if n.Kind == yaml.ScalarNode {
		if ref, ok := d.jobs.envFile(n.Value); ok {
			return d.jobs.environmentFile(n, path, ref)
		}
		return job.Environment{Ref: d.envRef(n, path)}
	}
	var env job.Environment
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "an environment reference or an inline environment")
		return env
	}
	d.mapping(n, path, d.environmentFields(&env))
	d.checkEnvironment(n, path, &env)
	return env
}

// envRef decodes a reference to a registered environment. The azureml: prefix is
// removed; registry (azureml://registries/...) and ARM forms are kept whole, for the
// server to accept or refuse.
func (d *assetDecoder) envRef(n *yaml.Node, path string) string {
	v := strings.TrimSpace(d.str(n, path))
	lower := strings.ToLower(v)
	if strings.HasPrefix(lower, "azureml:/") {
		return v
	}
	ref := v
	if strings.HasPrefix(lower, "azureml:") {
		ref = v[len("azureml:"):]
	}
	if !envRef.MatchString(ref) {
		d.expected(n, path, "an environment reference like azureml:<name>:<version> or azureml:<name>@latest, or an inline environment")
		return ""
	}
	return ref
}

// environmentFields is the field table of an inline or standalone environment.
func (d *assetDecoder) environmentFields(e *job.Environment) fields {
	str := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) { *dst = d.str(n, p) }
	}
	return fields{
		"name":             str(&e.Name),
		"version":          str(&e.Version),
		"description":      str(&e.Description),
		"tags":             func(n *yaml.Node, p string) { e.Tags = d.stringMap(n, p) },
		"image":            str(&e.Image),
		"conda_file":       func(n *yaml.Node, p string) { d.condaFile(n, p, e) },
		"build":            func(n *yaml.Node, p string) { d.build(n, p, e) },
		"os_type":          func(n *yaml.Node, p string) { e.OSType = d.enum(n, p, "linux", "windows") },
		"inference_config": nil,
		"requirements": func(n *yaml.Node, p string) {
			e.Requirements, e.RequirementsText, _ = d.textFile(n, p)
		},
		"user_managed_dependencies": func(n *yaml.Node, p string) { e.UserManagedDependencies, _ = d.boolean(n, p) },
		"interpreter_path":          str(&e.InterpreterPath),
	}
}

// checkEnvironment applies the rules between an environment's fields.
func (d *assetDecoder) checkEnvironment(n *yaml.Node, path string, e *job.Environment) {
	if e.Image != "" && e.BuildPath != "" {
		d.errorf(lookup(n, "build"), join(path, "build"), "image and build are mutually exclusive")
	}
}

// condaFile decodes conda_file: a local file (read into CondaSpec) or an inline mapping
// (re-encoded as YAML text).
func (d *assetDecoder) condaFile(n *yaml.Node, path string, e *job.Environment) {
	if n.Kind == yaml.MappingNode {
		d.entries(n, path)
		text, err := yaml.Marshal(blockStyle(n))
		if err != nil {
			d.errorf(n, path, "encode: %v", err)
			return
		}
		e.CondaSpec = string(text)
		return
	}
	p, text, ok := d.textFile(n, path)
	if !ok {
		return
	}
	var doc yaml.Node
	if err := safeUnmarshal([]byte(text), &doc); err != nil {
		d.errorf(n, path, "%s: malformed YAML: %s", n.Value, strings.TrimPrefix(err.Error(), "yaml: "))
		return
	}
	if len(doc.Content) == 0 || resolve(doc.Content[0]).Kind != yaml.MappingNode {
		d.errorf(n, path, "%s: expected a conda environment (a YAML mapping)", n.Value)
		return
	}
	e.CondaFile, e.CondaSpec = p, text
}

// blockStyle returns a copy of n with flow collections turned into block ones, so that
// an inline conda mapping reads like a conda file.
func blockStyle(n *yaml.Node) *yaml.Node {
	c := *n
	c.Style &^= yaml.FlowStyle
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = blockStyle(child)
		}
	}
	return &c
}

// build decodes build: {path, dockerfile_path}; a local context must hold the Dockerfile.
func (d *assetDecoder) build(n *yaml.Node, path string, e *job.Environment) {
	var ctx, dockerfile *yaml.Node
	got := d.mapping(n, path, fields{
		"path":            func(v *yaml.Node, _ string) { ctx = v },
		"dockerfile_path": func(v *yaml.Node, p string) { dockerfile = v; e.DockerfilePath = d.str(v, p) },
	})
	if n.Kind != yaml.MappingNode {
		return
	}
	if e.DockerfilePath == "" {
		e.DockerfilePath = "Dockerfile"
	}
	if got["path"] == nil {
		d.required(n, join(path, "path"))
		return
	}
	s := d.str(ctx, join(path, "path"))
	if s == "" || isURI(s) {
		e.BuildPath = s
		return
	}
	dir, ok := d.dir(ctx, join(path, "path"), s, "a build context")
	if !ok {
		return
	}
	e.BuildPath = dir
	if info, err := os.Stat(filepath.Join(dir, e.DockerfilePath)); err != nil || info.IsDir() {
		at, atPath := dockerfile, join(path, "dockerfile_path")
		if at == nil {
			at, atPath = ctx, join(path, "path")
		}
		d.errorf(at, atPath, "%s does not exist in %s", e.DockerfilePath, s)
	}
}
