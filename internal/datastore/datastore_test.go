package datastore

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseURI(t *testing.T) {
	tests := []struct {
		in     string
		want   URI
		errHas string
	}{
		{in: "azureml://datastores/workspaceblobstore/paths/example-data/", want: URI{"workspaceblobstore", "example-data"}},
		{in: "AzureML://datastores/ws/paths/a/b.csv", want: URI{"ws", "a/b.csv"}},
		{in: "azureml://datastores/ws/paths/", want: URI{"ws", ""}},
		{in: "azureml://datastores/ws/paths", want: URI{"ws", ""}},
		{in: "azureml://datastores/ws/paths/a/../../etc", errHas: "not a clean path"},
		{in: "azureml://datastores/ws/paths/../x", errHas: "not a clean path"},
		{in: "azureml://datastores/ws/paths/a//b", errHas: "not a clean path"},
		{in: "azureml://datastores/ws/paths/a\\..\\b", errHas: "not a clean path"},
		{in: "azureml://datastores/ws/a", errHas: "expected azureml://datastores/<datastore>/paths/<path>"},
		{in: "azureml://datastores/w s/paths/a", errHas: "not a datastore name"},
		{in: "https://x/paths/a", errHas: "expected azureml://datastores/"},
	}
	for _, tt := range tests {
		got, err := ParseURI(tt.in)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("ParseURI(%q) = %+v, %v; want an error with %q", tt.in, got, err, tt.errHas)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseURI(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// The entry holding a path is the one at its longest prefix; at one path the newest write wins;
// a sibling that only shares a string prefix does not count.
func TestFind(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	entries := []Entry{
		{Path: "data", Manifest: "top", CreatedAt: at(1)},
		{Path: "data/raw", Manifest: "old", CreatedAt: at(1)},
		{Path: "data/raw", Manifest: "new", CreatedAt: at(2)},
		{Path: "data/rawer", Manifest: "sibling", CreatedAt: at(3)},
	}
	tests := []struct {
		p, manifest, sub string
		ok               bool
	}{
		{"data/raw/a.csv", "new", "a.csv", true},
		{"data/raw", "new", "", true},
		{"data/other/x", "top", "other/x", true},
		{"dat", "", "", false},
		{"elsewhere", "", "", false},
	}
	for _, tt := range tests {
		e, sub, ok := Find(entries, tt.p)
		if ok != tt.ok || e.Manifest != tt.manifest || sub != tt.sub {
			t.Errorf("Find(%q) = %q, %q, %v; want %q, %q, %v", tt.p, e.Manifest, sub, ok, tt.manifest, tt.sub, tt.ok)
		}
	}
	if diff := cmp.Diff([]string{"a/b/c", "a/b", "a"}, Prefixes("a/b/c")); diff != "" {
		t.Errorf("Prefixes (-want +got):\n%s", diff)
	}
}

func TestPathsAndChecks(t *testing.T) {
	h := strings.Repeat("ab", 32)
	if got := UploadPath(h, "/home/me/iris/"); got != "LocalUpload/"+h[:32]+"/iris" {
		t.Errorf("UploadPath = %s", got)
	}
	if got := UploadPath(h, "/"); got != "LocalUpload/"+h[:32]+"/data" {
		t.Errorf("UploadPath of / = %s", got)
	}
	if run, out, sub, ok := JobOutputPath("azureml/j1/model/a/b"); !ok || run != "j1" || out != "model" || sub != "a/b" {
		t.Errorf("JobOutputPath = %s %s %s %v", run, out, sub, ok)
	}
	if _, _, _, ok := JobOutputPath("azureml/j1"); ok {
		t.Error("azureml/j1 read as a job output")
	}
	d := Datastore{Name: "nfs", Type: TypeLocalFolder, Path: "/shared/data"}
	if !d.Mounts("local") || d.Mounts("gpu") {
		t.Errorf("default mounts: local %v, gpu %v", d.Mounts("local"), d.Mounts("gpu"))
	}
	if d.Computes = []string{"gpu"}; d.Mounts("local") || !d.Mounts("gpu") {
		t.Errorf("listed mounts: local %v, gpu %v", d.Mounts("local"), d.Mounts("gpu"))
	}
	if got := d.LocalPath("a/b.csv"); got != "/shared/data/a/b.csv" {
		t.Errorf("LocalPath = %s", got)
	}
	for _, bad := range []Datastore{
		{Name: "x", Type: "azure_file"}, {Name: "x", Type: "s3", Path: "/a"}, {Name: "x", Type: TypeLocalFolder, Path: "/a/../b"},
		{Name: WorkspaceBlobStore, Type: TypeLocalFolder, Path: "/a"},
	} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%+v) accepted", bad)
		}
	}
}
