package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

// clusterShow is `compute show` of a cluster: the target, its nodes and its timeline.
type clusterShow struct {
	api.Compute
	Nodes    []api.Node      `json:"nodes"`
	Timeline []api.NodeEvent `json:"timeline"`
}

func clusterView(ctx context.Context, c *api.Client, ct *api.Compute) (*clusterShow, error) {
	nodes, err := c.Nodes.List(ctx, ct.Name)
	if err != nil {
		return nil, err
	}
	events, err := c.Nodes.Events(ctx, ct.Name, 50)
	if err != nil {
		return nil, err
	}
	return &clusterShow{Compute: *ct, Nodes: nodes, Timeline: events}, nil
}

func showCluster(w io.Writer, v *clusterShow) error {
	if err := showCompute(w, &v.Compute); err != nil {
		return err
	}
	if s := v.Spec; s != nil && s.Cluster != nil {
		join, all := s.Cluster.JoinTimeout, s.Cluster.ProvisionTimeout
		if join <= 0 {
			join = compute.DefaultJoinTimeout
		}
		if all <= 0 {
			all = compute.DefaultProvisionTimeout
		}
		fmt.Fprintf(w, "Join timeout: %ds once the provider created the machine, %ds from the node's creation\n", join, all)
	}
	if p := v.Properties; p != nil {
		fmt.Fprintf(w, "Nodes: %d current, %v target\n", len(v.Nodes), p["target_nodes"])
		if e, _ := p["last_error"].(string); e != "" {
			fmt.Fprintf(w, "Last error: %s\n", e)
		}
		if ex, ok := p["explain"].([]any); ok {
			var lines []string
			for _, l := range ex {
				lines = append(lines, fmt.Sprint(l))
			}
			section(w, "Autoscaler", lines)
		}
	}
	rows := make([][]string, 0, len(v.Nodes))
	for _, n := range v.Nodes {
		var runs []string
		for _, r := range n.Runs {
			if r.Alive {
				runs = append(runs, r.RunID)
			}
		}
		rows = append(rows, []string{n.ID, n.State, resources.FormatCPU(n.Capacity.MilliCPU),
			humanBytes(n.Capacity.Memory), fmt.Sprint(n.Capacity.GPU), strings.Join(runs, ","), n.StateReason})
	}
	if len(rows) > 0 {
		fmt.Fprintln(w, "Nodes:")
		if err := table(w, []string{"  NODE", "STATE", "CORES", "MEMORY", "GPUS", "RUNS", "REASON"}, rows); err != nil {
			return err
		}
	}
	var tl []string
	for _, e := range v.Timeline {
		tl = append(tl, fmt.Sprintf("%s  %-24s %s -> %s  %s", e.Time.Local().Format("15:04:05"), e.Node, e.From, e.To, e.Reason))
	}
	section(w, "Timeline", tl)
	return nil
}
