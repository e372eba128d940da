package nodecmd

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/hangar-ml/hangar/internal/agent"
	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/resources"
)

func TestAgentFlags(t *testing.T) {
	ok := agentFlags{server: "http://s", token: "hj1.t", workDir: "/w", gpus: "1,0", cores: "1500m", memory: "2Gi",
		labels: []string{"zone=a", "disk=ssd"}, logs: logFlags(t), heartbeat: agent.DefaultHeartbeat}
	loud, xml := logFlags(t, "--log-level", "loud"), logFlags(t, "--log-format", "xml")
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
		{"bad log level", func(f *agentFlags) { f.logs = loud }, true},
		{"bad log format", func(f *agentFlags) { f.logs = xml }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HANGAR_JOIN_TOKEN", "hj1.env")
			f := ok
			tt.change(&f)
			cfg, _, err := f.config(t.Context())
			var ee *cli.ExitError
			if tt.usage {
				if !errors.As(err, &ee) || ee.Code != cli.ExitUsage {
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

// logFlags are the log flags as the command line args set them.
func logFlags(t *testing.T, args ...string) cli.LogFlags {
	t.Helper()
	var l cli.LogFlags
	fl := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	l.Register(fl)
	if err := fl.Parse(args); err != nil {
		t.Fatal(err)
	}
	return l
}
