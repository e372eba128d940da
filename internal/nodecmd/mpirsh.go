package nodecmd

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/cli"
)

func newMPIRshCmd(env *cli.Env) *cobra.Command {
	return &cobra.Command{
		Use:   "mpi-rsh HOST COMMAND...",
		Short: "Start a command on another node of the run (the MPI launcher's remote agent)",
		Long: `Run COMMAND on the node of the current run whose address is HOST (one of $HANGAR_NODE_ADDRS),
through the workspace server, and exit with its exit code. The supervisor of an MPI run gives it
to mpirun as its remote agent instead of ssh, so a run's nodes need no ssh between them. It works
only inside a run ($HANGAR_WORKSPACE_URL, $HANGAR_RUN_TOKEN, $HANGAR_RUN_ID).`,
		Example: `  mpirun --mca plm_rsh_agent "hangar mpi-rsh" --mca plm_rsh_no_tree_spawn 1 -np 4 python3 train.py
  hangar mpi-rsh 10.0.0.5 hostname`,
		Hidden:             true,
		DisableFlagParsing: true,
		Args:               cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := mpiRsh(cmd.Context(), args[0], strings.Join(args[1:], " "))
			if err != nil {
				fmt.Fprintln(env.Stderr, "hangar mpi-rsh:", err)
				return &cli.ExitError{Code: 255}
			}
			if code != 0 {
				return &cli.ExitError{Code: code}
			}
			return nil
		},
	}
}

// mpiRsh relays a command to the supervisor of the node at host (one of the run's nodes, from
// HANGAR_NODE_ADDRS) through the workspace server, and waits for it to end. It is what mpirun on a
// run's first node uses instead of ssh, so the nodes need no ssh between them.
func mpiRsh(ctx context.Context, host, command string) (int, error) {
	url, tok, run := os.Getenv("HANGAR_WORKSPACE_URL"), os.Getenv("HANGAR_RUN_TOKEN"), os.Getenv("HANGAR_RUN_ID")
	if url == "" || tok == "" || run == "" {
		return 0, fmt.Errorf("not inside a Hangar run (HANGAR_WORKSPACE_URL, HANGAR_RUN_TOKEN, HANGAR_RUN_ID)")
	}
	rank := -1
	for i, a := range strings.Split(os.Getenv("HANGAR_NODE_ADDRS"), ",") {
		if a == host {
			rank = i
		}
	}
	if rank < 0 {
		return 0, fmt.Errorf("%s is not a node of this run (%s)", host, os.Getenv("HANGAR_NODE_ADDRS"))
	}
	var ca []byte
	if f := os.Getenv("HANGAR_SERVER_CA_FILE"); f != "" { // an https server: trust only its certificate
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, fmt.Errorf("HANGAR_SERVER_CA_FILE: %w", err)
		}
		ca = b
	}
	verify, err := api.WithCA(ca, "")
	if err != nil {
		return 0, fmt.Errorf("HANGAR_SERVER_CA_FILE %s: %w", os.Getenv("HANGAR_SERVER_CA_FILE"), err)
	}
	c := api.NewClient(url, tok, verify)
	if a, err := strconv.Atoi(os.Getenv("HANGAR_RUN_ATTEMPT")); err == nil {
		c.SetAttempt(a)
	}
	req, err := c.Runs.Exec(ctx, run, rank, command)
	if err != nil {
		return 0, err
	}
	for {
		st, err := c.Runs.ExecStatus(ctx, run, req.ID, 20*time.Second)
		if err != nil {
			return 0, err
		}
		if st.Done {
			fmt.Fprint(os.Stderr, st.Output)
			return st.ExitCode, nil
		}
	}
}
