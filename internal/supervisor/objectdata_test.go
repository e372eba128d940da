package supervisor

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
)

// The credentials fetched are those of the datastores the run reads or writes through; a direct
// input and a location without a datastore (the node's identity) need none.
func TestStoresNamed(t *testing.T) {
	at := func(ds string) *datastore.Location {
		return &datastore.Location{Datastore: ds, Type: datastore.TypeS3, Container: "bkt"}
	}
	sp := &job.Spec{
		Inputs: map[string]job.Input{
			"a": {Type: job.URIFolder, Store: at("lake")}, "b": {Type: job.URIFile, Mode: "download", Store: at("lake")},
			"c": {Type: job.URIFolder, Mode: "direct", Store: at("passed")}, "d": {Type: job.URIFolder, Store: at("")},
			"e": {Type: job.URIFolder, Manifest: "abc"}, "n": {Type: job.InputNumber, Value: "1"},
		},
		Outputs: map[string]job.Output{"o": {Store: at("out")}, "w": {}},
	}
	if got, want := storesNamed(sp), []string{"lake", "out"}; !slices.Equal(got, want) {
		t.Errorf("storesNamed = %q, want %q", got, want)
	}
	if got := storesNamed(&job.Spec{Inputs: map[string]job.Input{"d": {Store: at("")}}}); len(got) != 0 {
		t.Errorf("only the node's identity: %q", got)
	}
}

// Datastore credentials join the job's secrets in what the run's log and reports redact.
func TestRedactAlsoKeepsSecrets(t *testing.T) {
	c, err := newCapture(filepath.Join(t.TempDir(), "log"), func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	e := &secretEnv{}
	e.red.Store(newRedactor([]string{"job-secret-value"}))
	e.redactAlso([]string{"s3-secret-key", "sv=2024&sig=abc"}, &pipeline{capt: c})
	got := e.redactText("a job-secret-value, an s3-secret-key and a SAS ?sv=2024&sig=abc")
	if want := "a ***, an *** and a SAS ?***"; got != want {
		t.Errorf("redacted %q, want %q", got, want)
	}
	e.redactAlso(nil, &pipeline{capt: c})
	if got := e.redactText("s3-secret-key"); got != "***" {
		t.Errorf("nothing more to redact dropped what was: %q", got)
	}
}
