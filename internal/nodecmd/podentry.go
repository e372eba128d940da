package nodecmd

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/supervisor"
)

// newPodEntryCmd is `hangar pod-entry`, the first process of the container of a Hangar pod on
// Kubernetes (internal/backend/kubernetes writes the pod spec that runs it).
func newPodEntryCmd(env *cli.Env) *cobra.Command {
	var e supervisor.PodEntry
	var install, await string
	cmd := &cobra.Command{
		Use:   "pod-entry --config FILE",
		Short: "Start a run's supervisor as a Kubernetes pod's entrypoint (started by the Kubernetes backend)",
		Long: `Start a run's supervisor in a Kubernetes pod: complete its config with the pod's node rank,
run the supervisor, stand in for it when it is lost, and write the run's result as the
container's termination message. The Kubernetes backend's pods run it; nobody runs it by hand.`,
		Example: "  hangar pod-entry --config /hangar/config/supervisor.json --rank-env JOB_COMPLETION_INDEX",
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if await != "" { // the gate before an image that serves by its own entrypoint
				if code := supervisor.AwaitGate(cmd.Context(), await, env.Stderr); code != 0 {
					return &cli.ExitError{Code: code}
				}
				return nil
			}
			if install == "" && e.Config == "" {
				return usageError("pod-entry: --config is required")
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find own binary: %w", err)
			}
			if install != "" { // an init container copying this binary for the run's container
				return supervisor.InstallSelf(exe, install)
			}
			e.Exe = exe
			e.Log = slog.New(slog.NewTextHandler(env.Stderr, nil)).With("component", "pod-entry")
			if code := e.Run(cmd.Context()); code != 0 {
				return &cli.ExitError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&e.Config, "config", "", "the supervisor config the pod was given")
	cmd.Flags().StringVar(&e.RankEnv, "rank-env", "", "the variable holding this pod's node rank")
	cmd.Flags().StringVar(&e.TerminationLog, "termination-log", "/dev/termination-log", "where the result goes (the container's terminationMessagePath)")
	cmd.Flags().StringVar(&install, "install", "", "copy this binary to `PATH` and exit (the init container of a supervisor image)")
	cmd.Flags().StringVar(&await, "await", "", "wait until the supervisor writes `FILE`; exit 0 when it says ready (the gate before a serving image)")
	return cmd
}
