package nodecmd

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/runbox"
	"github.com/hangar-ml/hangar/internal/supervisor"
)

// salvageTimeout bounds how long a stand-in spends shipping a lost supervisor's spool and outputs.
const salvageTimeout = 2 * time.Minute

// newReapCmd is `hangar reap`, run on a node by whoever found a run's supervisor gone without a
// result (a backend, an agent, the Slurm batch script): it ends every process the run left, then
// stands in for the supervisor (ships what it had spooled, registers the node's logs and outputs,
// writes the result file) and prints what it ended as JSON.
func newReapCmd(env *cli.Env) *cobra.Command {
	var run, dir, why string
	cmd := &cobra.Command{
		Use:   "reap --run ID --dir RUN_DIR",
		Short: "End what a lost supervisor's run left on this node (run by backends, not by hand)",
		Long: `End every process a run left on this node after its supervisor was lost, then stand in for
the supervisor: ship what it had spooled, register the node's logs and outputs, write the result
file. It prints what it ended as JSON. Backends, agents and the Slurm batch script run it.`,
		Example: `  hangar reap --run plucky_otter_k3x9q2mz --dir ~/.hangar/local/runs/plucky_otter_k3x9q2mz
  hangar reap --run plucky_otter_k3x9q2mz --dir /scratch/hangar/runs/plucky_otter_k3x9q2mz --why "the node rebooted"`,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := runbox.Reap(cmd.Context(), run, dir)
			if err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(dir, supervisor.ResultFile)); errors.Is(err, os.ErrNotExist) {
				ctx, cancel := context.WithTimeout(cmd.Context(), salvageTimeout)
				defer cancel()
				log := slog.New(slog.NewTextHandler(env.Stderr, nil)).With("component", "reap", "run", run)
				supervisor.Salvage(ctx, dir, why+"; "+r.String(), log)
			}
			return json.NewEncoder(env.Stdout).Encode(r)
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "the run's id")
	cmd.Flags().StringVar(&dir, "dir", "", "the run's directory on this node")
	cmd.Flags().StringVar(&why, "why", "the supervisor is gone and left no result", "the reason the run ends with")
	_ = cmd.MarkFlagRequired("run")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}
