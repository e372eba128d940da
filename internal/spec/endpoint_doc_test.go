package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/serving"
)

// Every field of the online endpoint and deployment decoders is named in docs/schema.md.
func TestSchemaDocNamesOnlineFields(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var names []string
	for _, fs := range []fields{
		newDecoder("", "").serving.endpointFields(&serving.Endpoint{}), newDecoder("", "").serving.deploymentFields(&serving.Deployment{}),
	} {
		names = append(names, keys(fs)...)
	}
	names = append(names, endpointReadOnly...)
	names = append(names, deploymentReadOnly...)
	names = append(names, probeKeys...)
	for _, key := range append(append(names, endpointKeys...), deploymentKeys...) {
		segs := strings.Split(key, ".")
		field := segs[len(segs)-1]
		for i := len(segs) - 1; i > 0 && (field == "*" || field == "{}"); i-- {
			field = segs[i-1]
		}
		if field != "$schema" && !strings.Contains(doc, "`"+field+"`") && !strings.Contains(doc, "."+field+"`") {
			t.Errorf("docs/schema.md does not name %s (from %s)", field, key)
		}
	}
}
