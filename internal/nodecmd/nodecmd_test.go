package nodecmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/cli"
)

// Every node-side verb, hidden ones included, has a Short help and an Examples section (STYLE.md),
// as the client's commands do (internal/cli's TestEveryCommandHasExample).
func TestEveryCommandHasExample(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Short == "" || c.Example == "" {
			t.Errorf("`%s --help` lacks a Short help or an Examples section", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, c := range Commands(&cli.Env{}) {
		walk(c)
	}
}

// A node-side verb's usage error ends with exit code 2 through the client's root command.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"supervise"}, `required flag(s) "config" not set`},
		{[]string{"reap", "--run", "r"}, `required flag(s) "dir" not set`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Setenv("HANGAR_HOME", t.TempDir())
			t.Setenv("HANGAR_URL", "http://127.0.0.1:1")
			var stderr bytes.Buffer
			code := cli.Run(t.Context(), cli.Deps{Node: Commands}, append([]string{"hangar"}, tt.args...), &stderr)
			if code != cli.ExitUsage || !strings.HasPrefix(stderr.String(), "Error: ") || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit code %d, stderr %q; want %d and an Error: line containing %q", code, stderr.String(), cli.ExitUsage, tt.want)
			}
		})
	}
}
