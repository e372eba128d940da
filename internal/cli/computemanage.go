package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/spec"
)

// newComputePutCmd is compute create, attach and update: all take a compute YAML file.
func newComputePutCmd(env *Env, verb, short, example string, update bool) *cobra.Command {
	var file, name string
	var sets []string
	cmd := &cobra.Command{
		Use:     verb,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, warnings, err := spec.ParseComputeFile(file, sets)
			if err != nil {
				return specError(err)
			}
			for _, w := range warnings {
				fmt.Fprintf(env.Stderr, "warning: %s\n", w)
			}
			if name != "" {
				s.Name = name
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			ct, err := c.CreateCompute(cmd.Context(), *s, update)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			return env.printData(ct, func(w io.Writer) error {
				done := map[bool]string{false: "Created", true: "Updated"}[update]
				fmt.Fprintf(w, "%s compute %s (%s)\n", done, ct.Name, ct.Type)
				if ct.Node != nil {
					fmt.Fprintf(w, "Node: %s, %s, %d cores, %s memory, %d GPUs\n", ct.Node.Hostname, ct.Node.OS,
						ct.Node.Cores, humanBytes(ct.Node.MemoryBytes), len(ct.Node.GPUs))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "compute YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "name (default: from the file)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field: --set key.path=value (repeatable)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// newComputeDeleteCmd is compute delete and detach.
func newComputeDeleteCmd(env *Env, verb, short string) *cobra.Command {
	var name string
	var force bool
	cmd := &cobra.Command{
		Use:     verb,
		Short:   short,
		Example: fmt.Sprintf("  hangar compute %s -n gpu-box\n  hangar compute %s -n gpu-box --force   # cancels its active runs", verb, verb),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			if err := c.DeleteCompute(cmd.Context(), name, force); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Removed compute %s\n", name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute target name")
	cmd.Flags().BoolVar(&force, "force", false, "also when runs are active: they are canceled")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
