package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/agent"
	"github.com/hangar-ml/hangar/internal/resources"
)

func TestAgentFlags(t *testing.T) {
	ok := agentFlags{server: "http://s", token: "hj1.t", workDir: "/w", gpus: "1,0", cores: "1500m", memory: "2Gi",
		labels: []string{"zone=a", "disk=ssd"}, logs: logFlags{level: "info", format: "text"}, heartbeat: agent.DefaultHeartbeat}
	tests := []struct {
		name   string
		change func(f *agentFlags)
		usage  bool
	}{
		{"valid", func(*agentFlags) {}, false},
		{"no server", func(f *agentFlags) { f.server = "" }, true},
		{"bad cores", func(f *agentFlags) { f.cores = "many" }, true},
		{"bad memory", func(f *agentFlags) { f.memory = "2 bananas" }, true},
		{"bad gpus", func(f *agentFlags) { f.gpus = "0,x" }, true},
		{"bad label", func(f *agentFlags) { f.labels = []string{"novalue"} }, true},
		{"bad log level", func(f *agentFlags) { f.logs.level = "loud" }, true},
		{"bad log format", func(f *agentFlags) { f.logs.format = "xml" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HANGAR_JOIN_TOKEN", "hj1.env")
			f := ok
			tt.change(&f)
			cfg, _, err := f.config(t.Context())
			var ee *ExitError
			if tt.usage {
				if !errors.As(err, &ee) || ee.Code != ExitUsage {
					t.Fatalf("config = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := agent.Slice{MilliCPU: 1500, Memory: 2 * resources.Gi, GPUs: []int{1, 0}}
			if !cmp.Equal(cfg.Slice, want) || cfg.Labels["disk"] != "ssd" || cfg.Machine == nil || cfg.Exe == "" {
				t.Errorf("config %+v", cfg)
			}
		})
	}
}

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
