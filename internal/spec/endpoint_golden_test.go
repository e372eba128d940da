package spec

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// onlineGolden holds what every file under testdata/online decodes to.
const onlineGolden = "testdata/online.golden.json"

// TestOnlineExamplesGolden decodes the online endpoint and deployment files of
// github.com/Azure/azureml-examples (cli/endpoints/online, copied unchanged under
// testdata/online with the code and conda files they name; model folders are placeholders)
// and compares each result and its warnings with testdata/online.golden.json. The examples'
// {{PLACEHOLDERS}} (custom-container: registry, endpoint and model names the walkthroughs fill
// in with sed) get fixed values first.
// go test -run TestOnlineExamplesGolden -update rewrites it.
func TestOnlineExamplesGolden(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("testdata", "online"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !(strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data = fillPlaceholders(t, p, data)
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		var result any
		var warnings []string
		switch s := string(data); {
		case strings.Contains(s, "OnlineEndpoint.schema.json"):
			result, warnings, err = ParseEndpoint(p, data, filepath.Dir(p), nil)
		case strings.Contains(s, "OnlineDeployment.schema.json"):
			// Azure's deployments name conda files of sibling folders: read as with --spec-root
			result, warnings, err = ParseDeployment(p, data, filepath.Dir(p), nil, Root(root))
		default:
			return nil // a conda file
		}
		if err != nil {
			t.Errorf("%s does not decode:\n%v", rel, err)
			return nil
		}
		got[rel] = map[string]any{"result": result, "warnings": warnings}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 20 {
		t.Fatalf("only %d example files decoded", len(got))
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(out), root, "$DIR") + "\n"
	if *update {
		if err := os.WriteFile(onlineGolden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(onlineGolden)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, text, string(want))
}

// examplePlaceholders are the values the examples' walkthroughs substitute with sed.
var examplePlaceholders = map[string]string{
	"ENDPOINT_NAME": "my-endpoint", "ACR_NAME": "myregistry", "acr_name": "myregistry",
	"MODEL_VERSION": "1", "deployment_name": "blue", "model_name": "sklearn-diabetes",
	"environment_name": "mlflow-cc-env",
}

var examplePlaceholder = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

// fillPlaceholders replaces an example's {{NAME}}s; a name without a value fails the test.
func fillPlaceholders(t *testing.T, file string, data []byte) []byte {
	t.Helper()
	return examplePlaceholder.ReplaceAllFunc(data, func(m []byte) []byte {
		name := string(examplePlaceholder.FindSubmatch(m)[1])
		v, ok := examplePlaceholders[name]
		if !ok {
			t.Errorf("%s: no value for the placeholder %s", file, m)
		}
		return []byte(v)
	})
}
