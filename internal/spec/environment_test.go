package spec

import (
	"path/filepath"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

func parseEnv(t *testing.T, yml string, files map[string]string, sets ...string) (*job.Environment, []string, string, error) {
	t.Helper()
	dir := writeTree(t, files)
	e, warnings, err := ParseEnvironment("env.yml", []byte(yml), dir, sets)
	return e, warnings, dir, err
}

func TestParseEnvironmentValid(t *testing.T) {
	files := map[string]string{"conda.yaml": "dependencies: [python=3.10]\n", "docker/Dockerfile": "FROM x\n", "docker/gpu.Dockerfile": "FROM y\n"}
	tests := []struct {
		name string
		yml  string
		sets []string
		want job.Environment
	}{
		{
			name: "azure docker image plus conda",
			yml: `$schema: https://azuremlschemas.azureedge.net/latest/environment.schema.json
name: docker-image-plus-conda-example
image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04
conda_file: conda.yaml
description: Environment created from a Docker image plus Conda environment.
`,
			want: job.Environment{Name: "docker-image-plus-conda-example", Image: "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04",
				CondaFile: "$DIR/conda.yaml", CondaSpec: "dependencies: [python=3.10]\n",
				Description: "Environment created from a Docker image plus Conda environment."},
		},
		{
			name: "build context with version number",
			yml:  "name: e\nversion: 2\nbuild:\n  path: docker\n  dockerfile_path: gpu.Dockerfile\nos_type: Windows\n",
			want: job.Environment{Name: "e", Version: "2", BuildPath: "$DIR/docker", DockerfilePath: "gpu.Dockerfile", OSType: "windows"},
		},
		{
			name: "set overrides",
			yml:  "name: e\nimage: a\n",
			sets: []string{"version=3", "image=b", "tags.team=ml"},
			want: job.Environment{Name: "e", Version: "3", Image: "b", Tags: map[string]string{"team": "ml"}},
		},
		{
			name: "conda only (hangar builds it on the host)",
			yml:  "name: e\nconda_file: {dependencies: [numpy]}\n",
			want: job.Environment{Name: "e", CondaSpec: "dependencies:\n    - numpy\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, dir, err := parseEnv(t, tt.yml, files, tt.sets...)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, *normalize(t, e, dir), tt.want)
		})
	}
}

func TestParseEnvironmentErrors(t *testing.T) {
	tests := []struct{ name, yml, want string }{
		{"name required", "image: a\n", "env.yml: name: required"},
		{"bad name", "name: 'a b'\nimage: a\n", `env.yml: name: expected a name of letters, digits, _, . and - (at most 255), got "a b" (line 1)`},
		{"empty", "name: e\n", "env.yml: empty environment: give image, build, conda_file or requirements"},
		{"unknown field", "name: e\nimage: a\ncommand: x\n", "env.yml: command: unknown field (expected one of: build, conda_file, description, image, inference_config, interpreter_path, name, os_type, requirements, tags, user_managed_dependencies, version) (line 3)"},
		{"version mapping", "name: e\nimage: a\nversion: {a: 1}\n", "env.yml: version: expected a string, got a mapping (line 3)"},
		{"malformed", "name: e\n  image: a\n", "env.yml: line 2: malformed YAML: mapping values are not allowed in this context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := parseEnv(t, tt.yml, nil)
			checkErr(t, err, tt.want)
		})
	}
}

func TestParseEnvironmentFile(t *testing.T) {
	dir := writeTree(t, map[string]string{"envs/env.yml": "name: e\nrequirements: req.txt\n", "envs/req.txt": "torch\n"})
	e, _, err := ParseEnvironmentFile(filepath.Join(dir, "envs", "env.yml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, *e, job.Environment{Name: "e", Requirements: filepath.Join(dir, "envs", "req.txt"), RequirementsText: "torch\n"})
	_, _, err = ParseEnvironmentFile(filepath.Join(dir, "missing.yml"), nil)
	checkErr(t, err, "missing.yml: read: no such file or directory")
}
