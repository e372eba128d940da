package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// hangar answers Azure ML's CLI, so that a team's scripts run with one alias: invoked as `az`
// (a link or alias named az: argv[0]'s base name) or as `hangar az ...`, `az ml <verb> ...` is
// `hangar <verb> ...`. The az commands those scripts run before `az ml` (login, account set,
// configure, extension add) are accepted and do nothing, saying so on stderr; any other az
// group is refused with a usage error. docs/az.md says what is and is not answered.

// azNoOps are az's groups that set up an Azure session: with Hangar there is nothing to do.
var azNoOps = map[string]string{
	"login":     "Hangar's CLI uses the workspace at $HANGAR_URL (or the local one) with $HANGAR_TOKEN or `hangar login`'s stored token",
	"logout":    "see `hangar logout`",
	"account":   "a Hangar workspace has no Azure subscription",
	"configure": "Hangar's defaults are its workspace settings (`hangar settings list`); az's defaults are not kept",
	"config":    "Hangar's defaults are its workspace settings (`hangar settings list`); az's configuration is not kept",
	"extension": "Hangar answers `az ml` itself: no extension to add",
}

// azCommand is what an az command line becomes: hangar's arguments, or an answer given here.
type azCommand struct {
	args []string // hangar's arguments (run when handled is false)
	// handled: nothing to run; note goes to stderr and the process exits with code.
	handled bool
	note    string
	code    int
}

// azEntry reads argv: whether hangar was invoked as az (or as `hangar az`), and what to do.
// ok is false when argv is an ordinary hangar command line.
func azEntry(argv []string) (azCommand, bool) {
	if len(argv) == 0 {
		return azCommand{}, false
	}
	args := argv[1:]
	switch {
	case strings.TrimSuffix(filepath.Base(argv[0]), ".exe") == "az":
	case len(args) > 0 && args[0] == "az":
		args = args[1:]
	default:
		return azCommand{}, false
	}
	return translateAz(args), true
}

// translateAz maps az's arguments (after "az") to hangar's.
func translateAz(args []string) azCommand {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		return azCommand{handled: true, code: ExitUsage, note: "this is hangar answering az: `az ml <verb> ...` runs `hangar <verb> ...` " +
			"(az login, account, configure and extension do nothing); see `hangar --help`"}
	}
	group := args[0]
	switch {
	case group == "ml":
		return azCommand{args: args[1:]}
	case group == "version" || group == "--version":
		return azCommand{args: []string{"version"}}
	case azNoOps[group] != "":
		return azCommand{handled: true, code: ExitOK,
			note: fmt.Sprintf("note: az %s does nothing here: %s", strings.Join(azWords(args), " "), azNoOps[group])}
	}
	return azCommand{handled: true, code: ExitUsage, note: fmt.Sprintf("Error: az %s is not Azure ML's CLI: hangar answers `az ml ...` "+
		"(and accepts az login, account, configure and extension as no-ops); run the Azure CLI itself for other groups", group)}
}

// azWords are the command words of an az command line (its group and subgroup, before flags).
func azWords(args []string) []string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || len(words) == 2 {
			break
		}
		words = append(words, a)
	}
	return words
}

// Run runs the CLI for the process's argv (argv[0] included) and returns its exit code:
// az's command lines are translated (azEntry), flags normalized (normalizeFlags), then Execute.
func Run(ctx context.Context, deps Deps, argv []string, stderr io.Writer) int {
	return runArgv(ctx, NewRoot(deps), argv, stderr)
}

func runArgv(ctx context.Context, root *cobra.Command, argv []string, stderr io.Writer) int {
	args, code, done := prepareArgs(root, argv, stderr)
	if done {
		return code
	}
	root.SetArgs(args)
	return Execute(ctx, root, stderr)
}

// prepareArgs is Run's reading of argv: the arguments for root, or the exit code when nothing
// is left to run.
func prepareArgs(root *cobra.Command, argv []string, stderr io.Writer) ([]string, int, bool) {
	var args []string
	if len(argv) > 0 {
		args = argv[1:]
	}
	if az, ok := azEntry(argv); ok {
		if az.handled {
			fmt.Fprintln(stderr, az.note)
			return nil, az.code, true
		}
		args = az.args
	}
	n, err := normalizeFlags(root, args)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return nil, ExitUsage, true
	}
	for _, note := range n.notes {
		fmt.Fprintln(stderr, note)
	}
	return n.args, 0, false
}
