package spec

import (
	"strings"
	"testing"
)

// pipelineGolden holds what every file under testdata/pipelines decodes to.
const pipelineGolden = "testdata/pipelines.golden.json"

// TestPipelineGolden decodes pipeline jobs and components of github.com/Azure/azureml-examples
// (copied unchanged under testdata/pipelines, see its README) and compares each result, its
// warnings, or its errors (the ones Hangar refuses, each for a stated reason: a Spark step)
// with testdata/pipelines.golden.json (-update rewrites it).
func TestPipelineGolden(t *testing.T) {
	old := RandomSeed
	RandomSeed = func() int64 { return 42 }
	t.Cleanup(func() { RandomSeed = old })
	goldenExamples(t, exampleTree{dir: "pipelines", golden: pipelineGolden, exts: []string{".yml", ".yaml"}, min: 20, keepErrors: true,
		decode: func(t *testing.T, root, p string, data []byte) (any, []string, bool, error) {
			switch s := string(data); {
			case strings.Contains(s, "Component.schema.json"):
				r, w, err := ParseComponentFile(p, nil)
				return r, w, false, err
			case strings.Contains(s, "pipelineJob.schema.json"):
				r, w, err := ParseJobFile(p, nil)
				return r, w, false, err
			}
			return nil, nil, true, nil // a conda file, an MLTable
		}})
}
