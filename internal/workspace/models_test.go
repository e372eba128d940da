package workspace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

func TestSubtree(t *testing.T) {
	m := &snapshot.Manifest{Entries: []snapshot.Entry{
		{Path: "a", Type: snapshot.TypeDir}, {Path: "a/b", Type: snapshot.TypeDir},
		{Path: "a/b/c.txt", Type: snapshot.TypeFile, Hash: "h1", Size: 1}, {Path: "a/bc", Type: snapshot.TypeFile, Hash: "h2", Size: 2},
	}}
	got, err := subtree(m, "a/b")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]snapshot.Entry{{Path: "c.txt", Type: snapshot.TypeFile, Hash: "h1", Size: 1}}, got.Entries); diff != "" {
		t.Errorf("subtree a/b must not take a/bc (-want +got):\n%s", diff)
	}
	got, _ = subtree(m, "a/bc")
	if len(got.Entries) != 1 || got.Entries[0].Path != "bc" {
		t.Errorf("a file's subtree = %+v, want it under its own name", got.Entries)
	}
}

// A deployment finds a model's files as on Azure: under AZUREML_MODEL_DIR/<the registered
// folder's name>, or directly there for a one-file model.
func TestModelFolder(t *testing.T) {
	one := []snapshot.Entry{{Path: "model.pkl", Type: snapshot.TypeFile}}
	two := []snapshot.Entry{{Path: "a", Type: snapshot.TypeFile}, {Path: "b", Type: snapshot.TypeFile}}
	tests := []struct {
		path  string
		files []snapshot.Entry
		want  string
	}{
		{"/home/me/model-1/model/", two, "model"},
		{"/home/me/model.pkl", one, ""},
		{"/home/me/models", one, "models"},
		{"azureml://jobs/j1/outputs/trained", two, "trained"},
		{"azureml://jobs/j1/outputs/artifacts/paths/outputs/model.pkl", one, ""},
		{`C:\\models\\mnist`, two, "mnist"},
		{"", two, ""},
	}
	for _, tt := range tests {
		if got := modelFolder(tt.path, tt.files); got != tt.want {
			t.Errorf("modelFolder(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
