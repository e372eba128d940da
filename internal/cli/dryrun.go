package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/launch"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/parallel"
)

// dryRunNode is what one node would start.
type dryRunNode struct {
	Node      int              `json:"node_rank"`
	Address   string           `json:"address"`
	MPI       bool             `json:"mpi,omitempty"`
	Hostfile  string           `json:"hostfile,omitempty"`
	Processes []launch.Process `json:"processes"`
}

// dryRun prints, per node, the processes Hangar would start for the job and their variables,
// without creating anything. Addresses of cluster nodes and the rendezvous port are only known
// when the run is placed: placeholders stand for them.
func (e *Env) dryRun(ctx context.Context, sp *job.Spec) error {
	if sp.Type == "parallel" { // what runs is Hangar's parallel driver: show its command
		cmd, err := parallel.ToCommand(*sp)
		if err != nil {
			return usageError("%v", err)
		}
		sp = &cmd
	}
	n := max(sp.Resources.InstanceCount, 1)
	gpus, where := e.dryRunGPUs(ctx, sp)
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("<node %d address>", i)
	}
	if sp.Compute == "" || sp.Compute == "local" {
		addrs = []string{"127.0.0.1"}
	}
	var out []dryRunNode
	for i := range addrs {
		plan, err := launch.Make(sp.Distribution, len(addrs), launch.Topology{Nodes: addrs, NodeRank: i, MasterPort: 29500, GPUs: gpus})
		if err != nil {
			return fmt.Errorf("dry run: %w", err)
		}
		out = append(out, dryRunNode{Node: i, Address: addrs[i], MPI: plan.MPI, Hostfile: plan.Hostfile, Processes: plan.Processes})
	}
	return e.printData(out, func(w io.Writer) error {
		fmt.Fprintf(w, "Dry run (nothing created): %d node(s) on compute %s, GPUs per node from %s\n", len(out), orDefault(sp.Compute, "local (the default)"), where)
		fmt.Fprintf(w, "Command: %s\n", sp.Command)
		if len(out) > 1 || sp.Distribution != nil {
			fmt.Fprintln(w, "MASTER_PORT 29500 stands for the port chosen when the run is placed.")
		}
		for _, nd := range out {
			dryRunPrintNode(w, nd)
		}
		return nil
	})
}

func dryRunPrintNode(w io.Writer, nd dryRunNode) {
	fmt.Fprintf(w, "\nNode %d (%s):\n", nd.Node, nd.Address)
	if nd.MPI {
		fmt.Fprintf(w, "  mpirun with this hostfile starts the ranks:\n    %s\n", strings.ReplaceAll(strings.TrimSpace(nd.Hostfile), "\n", "\n    "))
	}
	for _, p := range nd.Processes {
		fmt.Fprintf(w, "  rank %d (local rank %d), log user_logs/%s\n", p.Rank, p.LocalRank, p.Log)
		keys := make([]string, 0, len(p.Env))
		for k := range p.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "    %s=%s\n", k, p.Env[k])
		}
	}
}

// dryRunGPUs are a node's GPUs: this machine's for the local target, the size's for a cluster.
func (e *Env) dryRunGPUs(ctx context.Context, sp *job.Spec) ([]string, string) {
	if sp.Compute == "" || sp.Compute == "local" {
		var out []string
		for _, g := range node.DetectGPUs(ctx) {
			out = append(out, strconv.Itoa(g.Index))
		}
		return out, "this machine (nvidia-smi)"
	}
	c, err := e.client(ctx)
	if err != nil {
		return nil, "nowhere (no workspace)"
	}
	ct, err := c.Computes.Get(ctx, sp.Compute)
	if err != nil || ct.Spec == nil || ct.Spec.Cluster == nil {
		return nil, "nowhere (not a cluster, or unknown)"
	}
	sizes, err := c.Sizes.List(ctx)
	if err != nil {
		return nil, "nowhere (no size catalog)"
	}
	for _, s := range sizes {
		if strings.EqualFold(s.Name, ct.Spec.Cluster.Size) {
			var out []string
			for i := 0; i < s.GPUs; i++ {
				out = append(out, strconv.Itoa(i))
			}
			return out, "size " + s.Name
		}
	}
	return nil, "nowhere (unknown size)"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
