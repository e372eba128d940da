package nodecmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/cli"
)

// Commands are the node-side verbs, for cli.Deps.Node: they write to env's streams and end
// with cli's exit codes.
func Commands(env *cli.Env) []*cobra.Command {
	return []*cobra.Command{newMPIRshCmd(env), newSuperviseCmd(env), newAgentCmd(env), newReapCmd(env), newPodEntryCmd(env)}
}

// usageError marks a mistake in the command line itself (exit 2).
func usageError(format string, a ...any) error {
	return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf(format, a...)}
}
