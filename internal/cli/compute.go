package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

func newComputeCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "compute",
		Short:   "List and inspect compute targets",
		Long:    "Compute targets are the named places a workspace runs jobs. Every workspace has `local`.",
		Example: "  hangar compute list\n  hangar compute show -n local",
	}
	cmd.AddCommand(newComputeListCmd(env), newComputeShowCmd(env))
	return groupCmd(cmd)
}

func newComputeListCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List compute targets",
		Example: "  hangar compute list\n  hangar compute list -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			cs, err := c.ListComputes(cmd.Context())
			if err != nil {
				return err
			}
			return env.printData(cs, func(w io.Writer) error {
				rows := make([][]string, 0, len(cs))
				for _, c := range cs {
					def := ""
					if c.Default {
						def = "*"
					}
					rows = append(rows, []string{c.Name, c.Type, c.State, def, strconv.Itoa(c.ActiveRuns)})
				}
				return table(w, []string{"NAME", "TYPE", "STATE", "DEFAULT", "ACTIVE RUNS"}, rows)
			})
		},
	}
}

func newComputeShowCmd(env *Env) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:     "show",
		Short:   "Show a compute target and its node",
		Example: "  hangar compute show -n local\n  hangar compute show -n local -o yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			ct, err := c.GetCompute(cmd.Context(), name)
			if err != nil {
				return err
			}
			return env.printData(ct, func(w io.Writer) error { return showCompute(w, ct) })
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute target name")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func showCompute(w io.Writer, c *api.Compute) error {
	pairs := [][2]string{
		{"Name", c.Name}, {"Type", c.Type}, {"State", c.State}, {"Description", c.Description},
		{"Default", strconv.FormatBool(c.Default)}, {"Active runs", strconv.Itoa(c.ActiveRuns)},
	}
	if n := c.Node; n != nil {
		gpus := "none"
		if len(n.GPUs) > 0 {
			var gs []string
			for _, g := range n.GPUs {
				gs = append(gs, fmt.Sprintf("%d: %s (%s)", g.Index, g.Name, humanBytes(g.MemoryBytes)))
			}
			gpus = strings.Join(gs, ", ")
		}
		rt := n.ContainerRuntime
		if rt == "" {
			rt = "none (images run on the host, with a warning)"
		}
		pairs = append(pairs, [][2]string{
			{"Host", n.Hostname}, {"OS", n.OS + " " + n.Arch}, {"Kernel", n.Kernel},
			{"Cores", strconv.Itoa(n.Cores)}, {"Memory", humanBytes(n.MemoryBytes)},
			{"GPUs", gpus}, {"Containers", rt},
		}...)
	}
	return kv(w, pairs)
}
