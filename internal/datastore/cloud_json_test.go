package datastore

import (
	"encoding/json"
	"testing"
)

func TestLocationJSONHasItsURI(t *testing.T) {
	l := Location{Datastore: "lake", Type: TypeS3, Container: "bkt", Endpoint: "http://127.0.0.1:9000", Path: "in/x"}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["uri"] != "s3://bkt/in/x" || m["container"] != "bkt" {
		t.Fatalf("%s (%v)", b, err)
	}
	var back Location
	if err := json.Unmarshal(b, &back); err != nil || back != l {
		t.Fatalf("read back %+v (%v), want %+v", back, err, l)
	}
}
