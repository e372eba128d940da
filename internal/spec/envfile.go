package spec

import (
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/job"
)

// An environment may be given as a file wherever one may be given (a job, a step, a component,
// a deployment): `environment: file:./env.yml`, as Azure's examples write it, or a path to one
// (`./env.yml`, `envs/gpu.yaml`). The file is an environment file (Azure's environment schema,
// ParseEnvironment's fields); its relative paths (conda_file, build.path) resolve against its
// own folder, and it is read as an inline environment: its name and version are not registered.

// envFile says whether an environment given as text names a file, and which: `file:<path>`
// always; a path starting with ./, ../ or / (no environment name does); a name ending in .yml or
// .yaml when such a file exists (else it stays a registered environment's name).
func (d *jobDecoder) envFile(v string) (string, bool) {
	v = strings.TrimSpace(v)
	lower := strings.ToLower(v)
	switch {
	case strings.HasPrefix(lower, "file:"):
		return localPath(v), true
	case isURI(v):
		return "", false
	case strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"), filepath.IsAbs(v):
		return v, true
	case strings.HasSuffix(lower, ".yml") || strings.HasSuffix(lower, ".yaml"):
		info, err := os.Stat(d.abs(v))
		return v, err == nil && !info.IsDir()
	}
	return "", false
}

// environmentFile decodes the environment file a spec names at path (n is its node); problems
// inside the file name that file and its fields.
func (d *jobDecoder) environmentFile(n *yaml.Node, path, ref string) job.Environment {
	if ref == "" {
		d.expected(n, path, "an environment file (file:./env.yml)")
		return job.Environment{}
	}
	abs, info, ok := d.stat(n, path, ref)
	if !ok {
		return job.Environment{}
	}
	if info.IsDir() {
		d.errorf(n, path, "%s is a directory; expected an environment file", ref)
		return job.Environment{}
	}
	if !d.confined(n, path, ref, abs) { // confine.go
		return job.Environment{}
	}
	data, err := readSmall(abs)
	if err != nil {
		d.errorf(n, path, "read %s: %v", ref, unwrapPathError(err))
		return job.Environment{}
	}
	ed, root := begin(d.pipelines.relFile(ref), data, filepath.Dir(abs), nil, nil)
	if !d.fromSet[n] { // one given with --set reads inside its own folder
		d.inherit(ed)
	}
	var env job.Environment
	if root != nil {
		fs := ed.assets.environmentFields(&env)
		fs["$schema"] = nil
		ed.mapping(root, "", fs)
		ed.assets.checkEnvironment(root, "", &env)
		if env.IsEmpty() && len(ed.errs) == 0 {
			ed.errorf(nil, "", "empty environment: give image, build, conda_file or requirements")
		}
	}
	d.errs, d.warnings = append(d.errs, ed.errs...), append(d.warnings, ed.warnings...)
	env.Name, env.Version = "", "" // an inline environment, as Azure reads it: not registered
	return env
}
