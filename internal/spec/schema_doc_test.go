package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every field the decoders know (their key tables, which --set also uses) is named in
// docs/schema.md, so that the reference cannot fall behind a new field.
func TestSchemaDocNamesEveryField(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, table := range []struct {
		name string
		keys []string
	}{{"jobKeys", jobKeys}, {"computeKeys", computeKeys}, {"envKeys", envKeys}, {"parallelKeys", parallelKeys}, {"sweepKeys", sweepKeys}} {
		for _, key := range table.keys {
			segs := strings.Split(key, ".")
			field := segs[len(segs)-1]
			for i := len(segs) - 1; i > 0 && (field == "*" || field == "{}"); i-- {
				field = segs[i-1]
			}
			if !strings.Contains(doc, "`"+field+"`") && !strings.Contains(doc, "."+field+"`") {
				t.Errorf("docs/schema.md does not name %s (from %s in %s): add it with its type and what Hangar does with it", field, key, table.name)
			}
		}
	}
}
