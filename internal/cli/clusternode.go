package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newComputeNodeCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "node",
		Short:   "Manage a cluster's nodes (compute show -n <cluster> lists them)",
		Example: "  hangar compute show -n gpu-pool\n  hangar compute node delete -n gpu-pool-1a2b3c4d5e",
	}
	cmd.AddCommand(newComputeNodeDeleteCmd(env))
	return groupCmd(cmd)
}

const nodeDeleteHelp = `Delete one node of a managed cluster, e.g. one stuck provisioning or one whose machine
misbehaves. The cluster's provider deletes its machine (in the background), the node leaves the
cluster with "deleted by the user" on its timeline, and the runs it held go back to the queue as
a new attempt, as after a preemption (cancel a run to stop it instead). This is not a
provisioning failure: if runs wait, the cluster creates a replacement at once.

On a terminal it asks for confirmation; elsewhere (a script, CI) it refuses unless --yes is
given, and never waits for an answer.`

func newComputeNodeDeleteCmd(env *Env) *cobra.Command {
	var id string
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete NODE",
		Short: "Delete a cluster node: the provider deletes its machine, its runs are requeued",
		Long:  nodeDeleteHelp,
		Example: `  hangar compute show -n gpu-pool                       # the NODE column
  hangar compute node delete -n gpu-pool-1a2b3c4d5e
  hangar compute node delete -n gpu-pool-1a2b3c4d5e --yes`,
		Args: nameArgs(&id, "node"),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			return deleteNode(cmd.Context(), env, c, id, yes)
		}),
	}
	cmd.Flags().StringVarP(&id, "name", "n", "", "node id (the NODE column of compute show; or give it as the first argument)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// deleteNode asks (unless yes), deletes the node and says what became of it and its runs.
func deleteNode(ctx context.Context, env *Env, c *api.Client, id string, yes bool) error {
	n, err := c.Nodes.Get(ctx, id)
	if api.IsNotFound(err) {
		return fmt.Errorf("node %s does not exist (hangar compute show -n <cluster> lists the nodes)", id)
	}
	if err != nil {
		return err
	}
	q := fmt.Sprintf("Delete node %s of cluster %s (%s, %s)? The provider deletes its machine%s.",
		n.ID, n.Pool, n.State, countNoun(aliveRuns(n), "run"), requeueNote(n))
	if err := env.confirm(yes, q, "delete node "+id); err != nil {
		return err
	}
	d, err := c.Nodes.Delete(ctx, id)
	if err != nil {
		return err
	}
	return env.printData(d, func(w io.Writer) error {
		fmt.Fprintf(w, "Deleting node %s of cluster %s (%s): its machine is being deleted\n", d.Node, d.Pool, d.Reason)
		if len(d.Requeued) > 0 {
			fmt.Fprintf(w, "Requeued runs: %s\n", strings.Join(d.Requeued, ", "))
		}
		return nil
	})
}

func aliveRuns(n *api.Node) int {
	alive := 0
	for _, r := range n.Runs {
		if r.Alive {
			alive++
		}
	}
	return alive
}

func requeueNote(n *api.Node) string {
	if aliveRuns(n) == 0 {
		return ""
	}
	return " and its runs go back to the queue"
}

// confirmed reads one answer line: y or yes (any case) confirms; anything else, or no answer
// at all (stdin closed or not a terminal), does not.
func confirmed(in io.Reader) bool {
	line, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

// countNoun renders "1 run", "0 runs".
func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
