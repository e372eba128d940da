package spec

import "testing"

// TestComputeGolden runs each testdata/compute/*.txtar scenario like TestGolden: the
// compute.yml section and the files beside it (HOME is their folder, so ~/ paths resolve
// there), --set overrides one per line in "args", and the expected want.json (the spec
// and warnings) or want.err. go test -run TestComputeGolden -update rewrites them.
func TestComputeGolden(t *testing.T) {
	goldenScenarios(t, "testdata/compute/*.txtar", false, func(t *testing.T, a archive, dir string, sets []string) (any, []string, error) {
		t.Setenv("HOME", dir)
		yml, _ := a.get("compute.yml")
		return ParseCompute("compute.yml", []byte(yml), dir, sets)
	})
}
