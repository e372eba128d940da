package cli

import (
	"bytes"
	"encoding/json"
	"testing"
)

// --log-format json writes one JSON object a line, which log collectors parse.
func TestLogFormatJSON(t *testing.T) {
	var buf bytes.Buffer
	log, err := (&logFlags{level: "info", format: "json"}).logger(&buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("run started", "run", "quiet_fox")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not JSON: %q: %v", buf.String(), err)
	}
	if rec["msg"] != "run started" || rec["run"] != "quiet_fox" || rec["level"] != "INFO" {
		t.Errorf("record %v", rec)
	}
}
