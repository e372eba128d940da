package supervisor

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

func TestModelRequirements(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		t.Helper()
		dir := t.TempDir()
		for name, text := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	conda := "channels: [conda-forge]\ndependencies:\n- python=3.11.2\n- pip<=24.0\n- pip:\n  - mlflow==2.19.0\n  - scikit-learn==1.5.1\nname: mlflow-env\n"
	for _, tc := range []struct {
		name, folder string
		files        map[string]string
		want         []string
		file, errIn  string
	}{
		{"requirements.txt first", "", map[string]string{"MLmodel": "x", "requirements.txt": "mlflow==2.19.0\n# c\n-r other.txt\nscikit-learn==1.5.1\n", "conda.yaml": conda},
			[]string{"mlflow==2.19.0", "scikit-learn==1.5.1"}, "requirements.txt", ""},
		{"conda.yaml's pip list", "", map[string]string{"MLmodel": "x", "conda.yaml": conda}, []string{"mlflow==2.19.0", "scikit-learn==1.5.1"}, "conda.yaml", ""},
		{"the one subfolder", "", map[string]string{"model/MLmodel": "x", "model/requirements.txt": "numpy\n"}, []string{"numpy"}, "requirements.txt", ""},
		{"MLFLOW_MODEL_FOLDER", "b", map[string]string{"a/MLmodel": "x", "b/MLmodel": "x", "b/requirements.txt": "torch\n"}, []string{"torch"}, "requirements.txt", ""},
		{"no files", "", map[string]string{"MLmodel": "x"}, nil, "", ""},
		{"two models", "", map[string]string{"a/MLmodel": "x", "b/MLmodel": "x"}, nil, "", "nor in exactly one folder"},
		{"bad conda.yaml", "", map[string]string{"MLmodel": "x", "conda.yaml": "dependencies: [{conda: [x]}]\n"}, nil, "", "conda.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, file, err := modelRequirements(write(t, tc.files), tc.folder)
			if tc.errIn != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errIn) {
					t.Fatalf("error %v; want one saying %q", err, tc.errIn)
				}
				return
			}
			if err != nil || file != tc.file || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q from %q (%v); want %q from %q", got, file, err, tc.want, tc.file)
			}
		})
	}
}

// The node's python3 is used when it has every library the model names (mlflow aside, at any
// version); otherwise pip builds the model's requirements and what the scorer imports.
func TestPlanModelEnv(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reqs      []string
		have      map[string]string
		build     []string
		messageIn []string
	}{
		{"all there at other versions", []string{"mlflow==2.19.0", "scikit-learn==1.5.1", "cloudpickle"},
			map[string]string{"scikit-learn": "1.2.1", "cloudpickle": "2.2.0"}, nil,
			[]string{"model's requirements.txt is its environment", "python3 (/usr/bin/python3) has every library they name: scikit-learn 1.2.1, cloudpickle 2.2.0", "nothing is installed"}},
		{"only mlflow", []string{"mlflow"}, map[string]string{}, nil, []string{"none of them besides mlflow"}},
		{"a library missing", []string{"mlflow==2.19.0", "scikit_learn==1.5.1", "lightgbm==4.3.0"},
			map[string]string{"scikit-learn": "1.2.1"}, []string{"scikit_learn==1.5.1", "lightgbm==4.3.0", "numpy", "pandas", "pyyaml"},
			[]string{"lacks lightgbm==4.3.0", "built with pip from the node's package index", "lightgbm==4.3.0 numpy pandas pyyaml"}},
		{"the scorer's needs not doubled", []string{"PyYAML>=6", "pandas<3", "xgboost"}, map[string]string{"pyyaml": "6.0"},
			[]string{"PyYAML>=6", "pandas<3", "xgboost", "numpy"}, []string{"lacks pandas<3, xgboost"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planModelEnv("requirements.txt", tc.reqs, "python3 (/usr/bin/python3)", tc.have)
			if !reflect.DeepEqual(p.build, tc.build) {
				t.Errorf("build %q; want %q", p.build, tc.build)
			}
			for _, s := range tc.messageIn {
				if !strings.Contains(p.message, s) {
					t.Errorf("message %q does not say %q", p.message, s)
				}
			}
		})
	}
}

func TestIsMLflowNoCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		sp   job.Spec
		want bool
	}{
		{"online, no environment", job.Spec{Serve: &job.Serve{MLflow: true}}, true},
		{"batch, no environment", job.Spec{Parallel: &job.ParallelRun{MLflow: true}}, true},
		{"an environment named", job.Spec{Serve: &job.Serve{MLflow: true}, Environment: job.Environment{Image: "python:3.12"}}, false},
		{"a scoring script", job.Spec{Serve: &job.Serve{ScoringScript: "score.py"}}, false},
		{"a job", job.Spec{}, false},
	} {
		if got := isMLflowNoCode(tc.sp); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
