package archtest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runWriters are the only packages that may reach the store's run-row writers (store.RunWrites):
// the store, which declares them, and the run core, the one writer of run state (issue 29).
// Everything else asks the run core (controller.Runs).
var runWriters = []string{"internal/store", "internal/controller"}

func TestOnlyTheRunCoreWritesRuns(t *testing.T) {
	root, err := ModuleRoot(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	problems, err := Writers(root, "RunWrites", runWriters)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// A use through any name is found, in cmd/ and internal/, outside the allowed directories only
// (a subpackage of an allowed one is not allowed), and tests are not read.
func TestWritersFindsEveryUseOutsideTheAllowed(t *testing.T) {
	root := writeModule(t, map[string]string{
		"internal/store/s.go":         "package store\ntype RunWrites struct{}\ntype S struct{ RunWrites *RunWrites }\n",
		"internal/core/c.go":          "package core\nfunc f(s *S) { _ = s.RunWrites }\n",
		"internal/core/sub/c.go":      "package sub\nfunc f(s *S) { _ = s.RunWrites }\n",
		"internal/web/w.go":           "package web\nimport st \"m/internal/store\"\nvar _ *st.RunWrites\nfunc f(x st.S) {\n\t_ = x.RunWrites\n}\n",
		"internal/web/w_test.go":      "package web\nfunc g(x S) { _ = x.RunWrites }\n",
		"cmd/tool/main.go":            "package main\nfunc main() { var x struct{ RunWrites int }; _ = x.RunWrites }\n",
		"internal/other/unrelated.go": "package other\nfunc RunWrites() {}\n",
	})
	got, err := Writers(root, "RunWrites", []string{"internal/store", "internal/core"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"cmd/tool/main.go:2: uses RunWrites; only internal/store, internal/core may (ask the run core instead)",
		"internal/core/sub/c.go:2: uses RunWrites; only internal/store, internal/core may (ask the run core instead)",
		"internal/web/w.go:3: uses RunWrites; only internal/store, internal/core may (ask the run core instead)",
		"internal/web/w.go:5: uses RunWrites; only internal/store, internal/core may (ask the run core instead)",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
