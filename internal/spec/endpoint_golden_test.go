package spec

import (
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
	goldenExamples(t, exampleTree{dir: "online", golden: onlineGolden, exts: []string{".yml", ".yaml"}, min: 20,
		decode: func(t *testing.T, root, p string, data []byte) (any, []string, bool, error) {
			data = fillPlaceholders(t, p, data)
			switch s := string(data); {
			case strings.Contains(s, "OnlineEndpoint.schema.json"):
				r, w, err := ParseEndpoint(p, data, filepath.Dir(p), nil)
				return r, w, false, err
			case strings.Contains(s, "OnlineDeployment.schema.json"):
				// Azure's deployments name conda files of sibling folders: read as with --spec-root
				r, w, err := ParseDeployment(p, data, filepath.Dir(p), nil, Root(root))
				return r, w, false, err
			}
			return nil, nil, true, nil // a conda file
		}})
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
