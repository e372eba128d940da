package spec

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// An environment file, as Azure's examples give one (environment: file:./environments/env.yml,
// gpu_perf_job.yml), is read wherever an environment may be given: its paths relative to its own
// folder, inline (its name and version not registered). A bare ./path or a name ending in .yml
// that exists is a file too; otherwise a name stays a registered environment's.
func TestEnvironmentFile(t *testing.T) {
	files := map[string]string{
		"envs/env.yml": "$schema: https://azuremlschemas.azureedge.net/latest/environment.schema.json\n" +
			"name: nccltests\nversion: openmpi4.1.0-cuda11.1\nimage: python:3.12\nconda_file: conda.yml\n",
		"envs/conda.yml": "dependencies: [python=3.12]\n",
		"envs/bad.yml":   "image: python:3.12\nbuild: {path: .}\n",
		"envs/empty.yml": "name: empty\n",
		"local.yml":      "image: busybox\n",
	}
	want := job.Environment{Image: "python:3.12", CondaFile: "$DIR/envs/conda.yml", CondaSpec: "dependencies: [python=3.12]\n"}
	for _, env := range []string{"file:./envs/env.yml", "file:envs/env.yml", "./envs/env.yml", "envs/env.yml"} {
		t.Run(env, func(t *testing.T) {
			s, _, dir, err := parseJob(t, "command: echo\nenvironment: "+env+"\n", files)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, normalize(t, s, dir).Environment); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if s, _, _, err := parseJob(t, "command: echo\nenvironment: local.yml\n", files); err != nil || s.Environment.Image != "busybox" {
		t.Errorf("environment: local.yml (a file that exists) = %+v, %v", s.Environment, err)
	}
	if s, _, _, err := parseJob(t, "command: echo\nenvironment: azureml:conda.yml:2\n", files); err != nil || s.Environment.Ref != "conda.yml:2" {
		t.Errorf("a registered environment named like a file = %+v, %v", s.Environment, err)
	}
	if s, _, _, err := parseJob(t, "command: echo\nenvironment: other.yml\n", files); err != nil || s.Environment.Ref != "other.yml" {
		t.Errorf("a name ending in .yml that is no file = %+v, %v; want the registered environment other.yml", s.Environment, err)
	}

	// A step, a component and a deployment take it too, each relative to its own file.
	pipe := "type: pipeline\njobs:\n  a:\n    command: echo\n    environment: file:envs/env.yml\n  b:\n    component: comp/c.yml\n"
	files["comp/c.yml"] = "name: c\ncommand: echo\nenvironment: file:../envs/env.yml\n"
	s, _, _, err := parseJob(t, pipe, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"a", "b"} {
		if got := s.Pipeline.Steps[step].Spec.Environment; got.Image != "python:3.12" || !strings.HasSuffix(got.CondaFile, filepath.Join("envs", "conda.yml")) {
			t.Errorf("step %s's environment = %+v", step, got)
		}
	}

	for _, tt := range []struct{ env, want string }{
		{"file:./envs/nope.yml", "job.yml: environment: ./envs/nope.yml does not exist (line 2)"},
		{"./envs", "job.yml: environment: ./envs is a directory; expected an environment file (line 2)"},
		{"file:envs/bad.yml", "envs/bad.yml: build: image and build are mutually exclusive (line 2)"},
		{"file:envs/empty.yml", "envs/empty.yml: empty environment: give image, build, conda_file or requirements"},
	} {
		_, _, _, err := parseJob(t, "command: echo\nenvironment: "+tt.env+"\n", files)
		checkErr(t, err, tt.want)
	}
}

// An environment file outside the spec's folder is read only when --spec-root allows it, as a
// conda file is.
func TestEnvironmentFileIsConfined(t *testing.T) {
	dir := writeTree(t, map[string]string{"shared/env.yml": "image: busybox\n", "job/job.yml": "command: echo\nenvironment: file:../shared/env.yml\n"})
	_, _, err := ParseJobFile(filepath.Join(dir, "job", "job.yml"), nil)
	checkErr(t, err, "environment: ../shared/env.yml is outside", "--spec-root")
	s, _, err := ParseJobFile(filepath.Join(dir, "job", "job.yml"), nil, Root(dir))
	if err != nil || s.Environment.Image != "busybox" {
		t.Errorf("with --spec-root: %+v, %v", s, err)
	}
}
