package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
)

// What show and download ask the workspace for, from the argument and the flags.
func TestModelTargetResolve(t *testing.T) {
	tests := []struct {
		m             assetTarget
		name, version string
		usage         string
	}{
		{m: assetTarget{kind: model.Kind, name: "mnist"}, name: "mnist", version: "latest"},
		{m: assetTarget{kind: model.Kind, name: "azureml:mnist:3"}, name: "mnist", version: "3"},
		{m: assetTarget{kind: model.Kind, name: "mnist@latest"}, name: "mnist", version: "latest"},
		{m: assetTarget{kind: model.Kind, name: "mnist", version: "02"}, name: "mnist", version: "2"},
		{m: assetTarget{kind: model.Kind, name: "mnist", label: "latest"}, name: "mnist", version: "latest"},
		{m: assetTarget{kind: model.Kind, name: "mnist", version: "2", label: "latest"}, usage: "not both"},
		{m: assetTarget{kind: model.Kind, name: "mnist", label: "prod"}, usage: "the only label is latest"},
		{m: assetTarget{kind: model.Kind, name: "mnist:1", version: "2"}, usage: "names a version already"},
		{m: assetTarget{kind: model.Kind, name: "mnist", version: "0.0.1"}, name: "mnist", version: "0.0.1"},
		{m: assetTarget{kind: model.Kind, name: "mnist", version: "x/1"}, usage: "expected letters, digits"},
		{m: assetTarget{kind: model.Kind, name: "azureml:mnist@champion"}, name: "mnist", version: "@champion"},
		{m: assetTarget{kind: model.Kind, name: "mnist@champion", version: "2"}, usage: "names a version already"},
		{m: assetTarget{kind: model.Kind, name: "mnist@v2"}, usage: "v<number> is reserved"},
	}
	for _, tt := range tests {
		name, version, err := tt.m.resolve()
		var ee *ExitError
		switch {
		case tt.usage != "" && (!errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), tt.usage)):
			t.Errorf("%+v: err %v, want a usage error with %q", tt.m, err, tt.usage)
		case tt.usage == "" && (err != nil || name != tt.name || version != tt.version):
			t.Errorf("%+v = %s, %s, %v; want %s, %s", tt.m, name, version, err, tt.name, tt.version)
		}
	}
}

// Flags override the model file; a relative --path is made absolute; bad flags are usage errors.
func TestModelSpecFromFileAndFlags(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "model.yml")
	if err := os.WriteFile(file, []byte("name: a\nversion: 3\npath: w\ntype: mlflow_model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := modelSpec(modelCreateFlags{fileAssetFlags: fileAssetFlags{file: file, name: "b", sets: []string{"description=d"}}}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Name != "b" || sp.Version != "3" || sp.Type != "mlflow_model" || sp.Description != "d" || sp.Path != filepath.Join(dir, "w") {
		t.Errorf("spec = %+v", sp)
	}
	t.Chdir(dir)
	sp, err = modelSpec(modelCreateFlags{fileAssetFlags: fileAssetFlags{name: "c", path: "w"}}, io.Discard)
	if err != nil || sp.Path != filepath.Join(dir, "w") || sp.Type != "custom_model" {
		t.Errorf("flags only = %+v, %v", sp, err)
	}
	for _, f := range []fileAssetFlags{
		{path: "w"}, {name: "c"}, {name: "c", path: "w", typ: "onnx"}, {name: "c", path: "w", version: "1:0"},
		{name: "c", path: "w", sets: []string{"x=1"}}, {name: "a b", path: "w"},
	} {
		var ee *ExitError
		if _, err := modelSpec(modelCreateFlags{fileAssetFlags: f}, io.Discard); !errors.As(err, &ee) || ee.Code != ExitUsage {
			t.Errorf("%+v: %v, want a usage error", f, err)
		}
	}
}

// A deployment's model as show prints it: an alias with the version it resolved.
func TestModelText(t *testing.T) {
	for _, tt := range []struct {
		m    serving.ModelRef
		want string
	}{
		{serving.ModelRef{Ref: "iris@champion", Version: "2"}, "azureml:iris@champion (version 2)"},
		{serving.ModelRef{Ref: "iris@latest", Version: "3"}, "azureml:iris@latest"},
		{serving.ModelRef{Ref: "iris:1", Version: "1"}, "azureml:iris:1"},
		{serving.ModelRef{Manifest: "0123456789abcdef"}, "inline (0123456789ab)"},
	} {
		if got := modelText(tt.m); got != tt.want {
			t.Errorf("modelText(%+v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}

// model show says the MLflow stage (Archived for an archived version) and the aliases, beside
// Azure's free-text stage.
func TestShowModelRegistryFields(t *testing.T) {
	for _, tc := range []struct {
		v    model.Version
		want []string
	}{
		{model.Version{Name: "iris", Version: "3", Stage: "prod-candidate", MLflowStage: "Production", Aliases: []string{"champion", "prod"}},
			[]string{"Stage:        prod-candidate\n", "MLflow stage: Production\n", "Aliases:      champion, prod\n"}},
		{model.Version{Name: "iris", Version: "1", Archived: true}, []string{"MLflow stage: Archived\n"}},
		{model.Version{Name: "iris", Version: "2"}, []string{"MLflow stage: None\n"}},
	} {
		var b strings.Builder
		if err := showModel(&b, &tc.v); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("show %s:%s =\n%s\nwant %q", tc.v.Name, tc.v.Version, b.String(), w)
			}
		}
		if len(tc.v.Aliases) == 0 && strings.Contains(b.String(), "Aliases") {
			t.Errorf("show without aliases =\n%s", b.String())
		}
	}
}
