package curated

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

func TestReference(t *testing.T) {
	for _, tc := range []struct {
		ref, name string
		ok        bool
	}{
		{"azureml://registries/azureml/environments/sklearn-1.5/labels/latest", "sklearn-1.5", true},
		{"azureml://registries/azureml/environments/sklearn-1.5/versions/14", "sklearn-1.5", true},
		{"azureml://registries/azureml/environments/sklearn-1.5", "sklearn-1.5", true},
		{"AZUREML://registries/my-reg/environments/base/versions/1", "base", true},
		{"AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest", "AzureML-sklearn-1.0-ubuntu20.04-py38-cpu", true},
		{"AzureML-sklearn-1.0-ubuntu20.04-py38-cpu:33", "AzureML-sklearn-1.0-ubuntu20.04-py38-cpu", true},
		{"azureml-minimal", "azureml-minimal", true},
		{"Microsoft.ML.Something:2", "Microsoft.ML.Something", true},
		{"myenv:2", "", false},
		{"myenv@latest", "", false},
		{"azureml://registries/azureml/models/x/versions/1", "", false},
		{"azureml://registries/azureml/environments//labels/latest", "", false},
	} {
		name, ok := Reference(tc.ref)
		if ok != tc.ok || (ok && name != tc.name) {
			t.Errorf("Reference(%q) = %q, %v; want %q, %v", tc.ref, name, ok, tc.name, tc.ok)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"sklearn-1.5", "sklearn-*", "AzureML-sklearn-1.0-ubuntu20.04-py38-cpu", "*", "a_b"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "sklearn-1.5:2", "sklearn@latest", "azureml://registries/x", "a b", "../x"} {
		if err := CheckName(bad); err == nil {
			t.Errorf("CheckName(%q): no error", bad)
		}
	}
}

// Which mapping a curated name gets: the most specific match, with or without AzureML-, in any
// case; owners' mappings replace and remove defaults of the same name.
func TestMatch(t *testing.T) {
	owned := []Mapping{
		{Name: "SKLEARN-1.5", Environment: job.Environment{Ref: "team-sklearn:3"}},
		{Name: "*pytorch*", Environment: job.Environment{Image: "pytorch/pytorch:2.3.0-cpu"}},
		{Name: "*mlflow*", Removed: true},
		{Name: "responsibleai-*", Environment: job.Environment{Ref: "rai"}},
	}
	ms := Effective(Defaults(), owned)
	for _, tc := range []struct {
		name, want string // want: the matching mapping's name ("" none)
		builtin    bool
	}{
		{"sklearn-1.5", "SKLEARN-1.5", false},
		{"sklearn-1.0", "sklearn-*", true},
		{"AzureML-sklearn-1.0-ubuntu20.04-py38-cpu", "sklearn-*", true},
		{"azureml-SKLEARN-1.5", "SKLEARN-1.5", false},
		{"acpt-pytorch-2.8-cuda12.6", "*pytorch*", false},
		{"AzureML-lightgbm-3.3", "*lightgbm*", true},
		{"tensorflow-2.16-cuda12", "*tensorflow*", true},
		{"mlflow-py312-inference", "", false},
		{"responsibleai-tabular", "responsibleai-*", false},
		{"AzureML-AutoML", "", false},
	} {
		m, ok := Match(ms, tc.name)
		if got := map[bool]string{true: m.Name}[ok]; got != tc.want || (ok && m.Builtin != tc.builtin) {
			t.Errorf("Match(%q) = %q (builtin %v); want %q (builtin %v)", tc.name, got, m.Builtin, tc.want, tc.builtin)
		}
	}
}

func TestMoreSpecific(t *testing.T) {
	ms := []Mapping{{Name: "*"}, {Name: "sk*"}, {Name: "sklearn-*"}, {Name: "*learn-1.5"}, {Name: "sklearn-1.5"}}
	for _, tc := range []struct{ name, want string }{
		{"sklearn-1.5", "sklearn-1.5"},
		{"sklearn-1.0", "sklearn-*"},
		{"skimage", "sk*"},
		{"other", "*"},
	} {
		if m, _ := Match(ms, tc.name); m.Name != tc.want {
			t.Errorf("Match(%q) = %q, want %q", tc.name, m.Name, tc.want)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		p, n string
		want bool
	}{
		{"a*b", "ab", true}, {"a*b", "axxb", true}, {"a*b", "axx", false}, {"a*a", "a", false},
		{"*x*y*", "axbyc", true}, {"*x*y*", "aybx", false}, {"abc", "abc", true}, {"abc", "abcd", false},
	} {
		if got := glob(tc.p, tc.n); got != tc.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tc.p, tc.n, got, tc.want)
		}
	}
}

func TestRunsIn(t *testing.T) {
	got := []string{
		RunsIn(job.Environment{Ref: "team:2"}),
		RunsIn(job.Environment{InterpreterPath: SystemPython}),
		RunsIn(job.Environment{RequirementsText: "lightgbm\npandas\n"}),
		RunsIn(job.Environment{}),
	}
	want := []string{"environment team:2", "interpreter /usr/bin/python3", "pip requirements lightgbm pandas", "the host environment"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
