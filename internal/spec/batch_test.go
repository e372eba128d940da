package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// batchGolden holds what every file under testdata/batch decodes to.
const batchGolden = "testdata/batch.golden.json"

// TestBatchExamplesGolden decodes batch endpoint and deployment files of
// github.com/Azure/azureml-examples (cli/endpoints/batch, copied unchanged under
// testdata/batch; the code, conda and model files they name are placeholders) and compares each
// result and its warnings with testdata/batch.golden.json (-update rewrites it).
func TestBatchExamplesGolden(t *testing.T) {
	goldenExamples(t, exampleTree{dir: "batch", golden: batchGolden, exts: []string{".yml"}, min: 7,
		decode: func(t *testing.T, root, p string, data []byte) (any, []string, bool, error) {
			switch s := string(data); {
			case strings.Contains(s, "batchEndpoint.schema.json"):
				r, w, err := ParseBatchEndpointFile(p, nil)
				return r, w, false, err
			case strings.Contains(s, "batchDeployment.schema.json"):
				r, w, err := ParseBatchDeploymentFile(p, nil)
				return r, w, false, err
			}
			return nil, nil, true, nil // a conda file
		}})
}

// TestBatchDeploymentErrors checks that bad batch files are refused with the file, the field
// path and what was expected.
func TestBatchDeploymentErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "score.py"), []byte("def init(): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const base = "name: dep1\nendpoint_name: ep1\ntype: model\nmodel: azureml:m:1\ncompute: azureml:c1\n" +
		"environment: {image: python:3.12}\ncode_configuration: {code: ., scoring_script: score.py}\n"
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"pipeline", "name: dep1\nendpoint_name: ep1\ntype: pipeline\ncomponent: azureml:hello@latest\n",
			[]string{"dep.yml", "type", "pipeline batch deployments are not supported"}},
		{"no compute", strings.Replace(base, "compute: azureml:c1\n", "", 1), []string{"compute", "required"}},
		{"bad output action", base + "settings: {output_action: append_file}\n",
			[]string{"settings.output_action", "append_row", "summary_only"}},
		{"output file with a folder", base + "settings: {output_file_name: ../x.csv}\n",
			[]string{"settings.output_file_name", "a file name"}},
		{"unknown setting", base + "settings: {mini_batch: 3}\n", []string{"settings.mini_batch"}},
		{"bad retries", base + "settings: {retry_settings: {max_retries: -2}}\n", []string{"settings.retry_settings.max_retries"}},
		{"mini-batch of an unknown unit", base + "settings: {mini_batch_size: 10 parsecs}\n",
			[]string{`settings.mini_batch_size: "10 parsecs" is not a count or a size like "10kb"`}},
		{"no script for a custom model", strings.Replace(strings.Replace(base, "code_configuration: {code: ., scoring_script: score.py}\n", "", 1),
			"model: azureml:m:1", "model: {path: ., type: custom_model}", 1),
			[]string{"code_configuration", "required", "unless the model is an mlflow_model"}},
		{"summary_only without a script", strings.Replace(strings.Replace(base, "code_configuration: {code: ., scoring_script: score.py}\n", "", 1),
			"model: azureml:m:1", "model: {path: ., type: mlflow_model}", 1) + "settings: {output_action: summary_only}\n",
			[]string{"settings.output_action", "summary_only", "append_row"}},
		{"settings at the root with a type", base + "mini_batch_size: 3\n", []string{"mini_batch_size"}},
		{"name with a dot", strings.Replace(base, "name: dep1", "name: d.1", 1), []string{"name", "1 to 32 letters, digits, _ and -"}},
		{"missing script file", strings.Replace(base, "score.py}", "nope.py}", 1), []string{"code_configuration.scoring_script", "does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseBatchDeployment(filepath.Join(dir, "dep.yml"), []byte(tt.yaml), dir, nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, _, err := ParseBatchDeployment(filepath.Join(dir, "dep.yml"), []byte(base), dir, nil); err != nil {
		t.Fatalf("the base file is refused: %v", err)
	}
	// No scoring script: an MLflow model (its type, or an MLmodel file at its folder's root) is
	// scored by Hangar's built-in MLflow batch scorer; a registered model is the server's to judge.
	noCode := strings.Replace(strings.Replace(base, "code_configuration: {code: ., scoring_script: score.py}\n", "", 1),
		"environment: {image: python:3.12}\n", "", 1)
	mlmodel := filepath.Join(dir, "mlflow")
	if err := os.MkdirAll(mlmodel, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mlmodel, "MLmodel"), []byte("flavors: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"azureml:m:1", "{path: ., type: mlflow_model}", "{path: mlflow}"} {
		dep, warnings, err := ParseBatchDeployment(filepath.Join(dir, "dep.yml"), []byte(strings.Replace(noCode, "azureml:m:1", m, 1)), dir, nil)
		if err != nil {
			t.Errorf("model %s without code_configuration: %v", m, err)
			continue
		}
		if strings.HasPrefix(m, "{") && (!dep.ServesMLflowModel() || !strings.Contains(strings.Join(warnings, "\n"), "environment: not given")) {
			t.Errorf("model %s: type %q, warnings %q; want a no-code mlflow_model and the environment's warning", m, dep.Model.Type, warnings)
		}
	}
	// Azure's deployment names take '_' (regular_deployment in its examples) and short names.
	for _, name := range []string{"regular_deployment", "d1"} {
		dep, _, err := ParseBatchDeployment(filepath.Join(dir, "dep.yml"), []byte(strings.Replace(base, "name: dep1", "name: "+name, 1)), dir, nil)
		if err != nil || dep.Name != name {
			t.Errorf("a deployment named %s: %+v, %v", name, dep, err)
		}
	}
}

func TestBatchEndpointErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"name: ep1\nauth_mode: key\n", "auth_mode"},
		{"name: 1ep\n", "name"},
		{"description: x\n", "name"},
		{"name: ep1\ndefaults: {deployment_name: 'a b'}\n", "defaults.deployment_name"},
		{"name: ep1\nscoring_uri: x\nextra: 1\n", "extra"},
		{"name: ep1\ntraffic: {a: 100}\n", "traffic"},
	}
	for _, tt := range tests {
		_, _, err := ParseBatchEndpoint("ep.yml", []byte(tt.yaml), ".", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "ep.yml") {
			t.Errorf("%q: error %v does not name ep.yml and %s", tt.yaml, err, tt.want)
		}
	}
	e, _, err := ParseBatchEndpoint("ep.yml", []byte("name: ep1\ndefaults: {deployment_name: blue}\n"), ".", nil)
	if err != nil || e.DefaultDeployment != "blue" || e.AuthMode != "aad_token" {
		t.Fatalf("got %+v, %v", e, err)
	}
}

// TestSchemaDocNamesEveryBatchField checks that docs/schema.md names every batch field.
func TestSchemaDocNamesEveryBatchField(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range append(append([]string{}, batchEndpointKeys...), batchDeploymentKeys...) {
		segs := strings.Split(key, ".")
		field := segs[len(segs)-1]
		if field == "*" {
			field = segs[len(segs)-2]
		}
		if !strings.Contains(string(data), "`"+field+"`") && !strings.Contains(string(data), "."+field+"`") {
			t.Errorf("docs/schema.md does not name %s (from %s)", field, key)
		}
	}
}
