package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
)

func newComputeListSizesCmd(env *Env) *cobra.Command {
	return leaf[[]sizes.Size]{
		Use:   "list-sizes",
		Short: "List the node sizes clusters can use",
		Long: `List the node sizes a cluster's size: may name: cloud sizes Hangar knows (with indicative
pay-as-you-go prices), slices of this machine for the local provider (local-quarter,
local-half, local-full, and local-gpu on a machine with GPUs), and the workspace's own sizes
(hangar compute add-size). ISOLATED "yes" marks a size whose nodes are never shared: each run
of it gets nodes that run nothing else.`,
		Example: "  hangar compute list-sizes\n  hangar compute list-sizes -o json",
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]sizes.Size, error) {
			return c.Sizes.List(ctx)
		},
		human: sizeTable,
	}.cmd(env)
}

func sizeTable(w io.Writer, ss []sizes.Size) error {
	rows := make([][]string, 0, len(ss))
	for _, s := range ss {
		gpus := "-"
		if s.GPUs > 0 {
			gpus = strconv.Itoa(s.GPUs)
			if s.GPUModel != "" {
				gpus += " x " + s.GPUModel
			}
		}
		price := "-"
		if s.PricePerHour > 0 {
			price = fmt.Sprintf("$%.3f", s.PricePerHour)
		}
		isolated := "no"
		if s.Isolated {
			isolated = "yes"
		}
		rows = append(rows, []string{s.Name, strconv.Itoa(s.Cores), sizeMemory(s.MemoryBytes), gpus, price, s.Family, isolated, s.Source})
	}
	return table(w, []string{"NAME", "CORES", "MEMORY", "GPUS", "PRICE/HOUR", "FAMILY", "ISOLATED", "SOURCE"}, rows)
}

// sizeMemory shows whole Gi exactly and anything else to a tenth of a Gi ("11.8Gi").
func sizeMemory(b int64) string {
	if b%resources.Gi == 0 || b < resources.Gi {
		return resources.FormatMemory(b)
	}
	return fmt.Sprintf("%.1fGi", float64(b)/float64(resources.Gi))
}

func newComputeAddSizeCmd(env *Env) *cobra.Command {
	var s sizes.Size
	var memory string
	cmd := leaf[*sizes.Size]{
		Use:   "add-size",
		Short: "Add a node size to the workspace's catalog",
		Long: `Add a node size that clusters of this workspace may name, for machines Hangar does not know
(on-premises servers, another cloud's VMs). Its family is the quota family its cores count
against; its price is used for cost estimates only. An --isolated size's nodes are never
shared: a cluster of it gives each run nodes that run nothing else.`,
		Example: `  hangar compute add-size --name onprem-a100 --cores 32 --memory 256Gi --gpus 8 --gpu-model A100 --family onprem
  hangar compute add-size --name small --cores 2 --memory 4Gi --price 0.05 --family cpu
  hangar compute add-size --name whole-box --cores 64 --memory 512Gi --family onprem --isolated`,
		check: func(*cobra.Command, []string) error {
			var err error
			if s.MemoryBytes, err = resources.ParseMemory(memory); err != nil {
				return usageError("--memory: %v", err)
			}
			if err := s.Validate(); err != nil {
				return usageError("%v", err)
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (*sizes.Size, error) {
			return c.Sizes.Create(ctx, s)
		},
		human: func(w io.Writer, out *sizes.Size) error { return sizeTable(w, []sizes.Size{*out}) },
	}.cmd(env)
	fl := cmd.Flags()
	fl.StringVar(&s.Name, "name", "", "size name")
	fl.IntVar(&s.Cores, "cores", 0, "cores per node")
	fl.StringVar(&memory, "memory", "", "memory per node, e.g. 64Gi")
	fl.IntVar(&s.GPUs, "gpus", 0, "GPUs per node")
	fl.StringVar(&s.GPUModel, "gpu-model", "", "GPU model, e.g. A100")
	fl.Float64Var(&s.PricePerHour, "price", 0, "price per node-hour (for estimates)")
	fl.StringVar(&s.Family, "family", "", "quota family the size's cores count against")
	fl.BoolVar(&s.Isolated, "isolated", false, "never share a node of this size between runs")
	for _, f := range []string{"name", "cores", "memory", "family"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

func newComputeDeleteSizeCmd(env *Env) *cobra.Command {
	return namedDelete{
		use:      "delete-size NAME",
		short:    "Remove a node size the workspace added",
		example:  "  hangar compute delete-size onprem-a100\n  hangar compute delete-size -n onprem-a100 --yes",
		what:     "size",
		question: "Remove node size %s?", refusal: "delete size",
		del: func(ctx context.Context, c *api.Client, name string) error { return c.Sizes.Delete(ctx, name) },
	}.cmd(env)
}
