//go:build azuremlexamples

package spec

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestAzureMLExamples measures how many of Azure's own pipeline and component files (a
// checkout of github.com/Azure/azureml-examples named by HANGAR_AZUREML_EXAMPLES) decode, and
// prints why each of the others is refused. It is a measuring tool, run by hand with
// `HANGAR_AZUREML_EXAMPLES=<checkout> go test -tags azuremlexamples -run TestAzureMLExamples -v
// ./internal/spec`, so it is not part of the suite: the files that CI checks are copied under
// testdata/pipelines (TestPipelineGolden).
func TestAzureMLExamples(t *testing.T) {
	root := os.Getenv("HANGAR_AZUREML_EXAMPLES")
	if root == "" {
		t.Fatal("HANGAR_AZUREML_EXAMPLES is not set (a checkout of github.com/Azure/azureml-examples)")
	}
	schema := regexp.MustCompile(`(?m)^\$schema:.*/([A-Za-z]+)\.schema\.json`)
	typ := regexp.MustCompile(`(?m)^type:\s*(\w+)`)
	var jobs, comps, jobsOK, compsOK int
	var failures []string
	for _, dir := range []string{"cli/jobs/pipelines", "cli/jobs/pipelines-with-components"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !(strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s, ty := "", ""
			if m := schema.FindSubmatch(data); m != nil {
				s = string(m[1])
			}
			if m := typ.FindSubmatch(data); m != nil {
				ty = string(m[1])
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case strings.HasSuffix(s, "Component"):
				comps++
				if _, _, err := ParseComponentFile(p, nil); err != nil {
					failures = append(failures, "component "+rel+": "+firstLine(err.Error()))
				} else {
					compsOK++
				}
			case s == "pipelineJob" || (s == "" && ty == "pipeline"):
				jobs++
				if _, _, err := ParseJobFile(p, nil); err != nil {
					failures = append(failures, "pipeline  "+rel+": "+firstLine(err.Error()))
				} else {
					jobsOK++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(failures)
	for _, f := range failures {
		t.Log(f)
	}
	t.Logf("pipeline jobs: %d of %d decode; components: %d of %d decode", jobsOK, jobs, compsOK, comps)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
