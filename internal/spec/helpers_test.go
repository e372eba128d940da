package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// writeTree writes files (slash paths → content; a trailing "/" makes a directory) under
// a fresh directory named "proj" and returns its path.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// parseJob parses yml as "job.yml" in a tree holding files.
func parseJob(t testing.TB, yml string, files map[string]string, sets ...string) (*job.Spec, []string, string, error) {
	t.Helper()
	dir := writeTree(t, files)
	s, warnings, err := ParseJob("job.yml", []byte(yml), dir, sets)
	return s, warnings, dir, err
}

// baseSpec is a spec with the defaults every decoded job gets (files live in "proj").
func baseSpec(mod func(s *job.Spec)) *job.Spec {
	s := &job.Spec{Type: "command", ExperimentName: "proj", Resources: job.Resources{InstanceCount: 1}}
	if mod != nil {
		mod(s)
	}
	return s
}

// normalize replaces dir with $DIR everywhere in the spec, via JSON.
func normalize[T any](t testing.TB, v *T, dir string) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), dir, "$DIR"))
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkErr asserts err is an ErrorList that mentions every wanted substring.
func checkErr(t testing.TB, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %q", want)
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %T is not an ErrorList: %v", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
}

func diff(t testing.TB, got, want any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func replaceFirst(s, old, new string) string { return strings.Replace(s, old, new, 1) }
