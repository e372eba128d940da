package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/spec"
)

// newComputePutCmd is compute create, attach and update: all take a compute YAML file.
func newComputePutCmd(env *Env, verb, short, example string, update bool) *cobra.Command {
	var file, name, root string
	var sets []string
	cmd := &cobra.Command{
		Use:     verb,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, warnings, err := spec.ParseComputeFile(file, sets, specFiles(root)...)
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
	addSpecRootFlag(cmd, &root)
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// newComputeDeleteCmd is compute delete and detach.
func newComputeDeleteCmd(env *Env, verb, short string) *cobra.Command {
	var name string
	var force, yes bool
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Long: short + `. On a terminal it asks first; elsewhere (a script, CI) it refuses unless --yes is
given, and never waits for an answer.`,
		Example:           fmt.Sprintf("  hangar compute %s gpu-box\n  hangar compute %s -n gpu-box --force --yes   # cancels its active runs", verb, verb),
		Args:              nameArgs(&name, "compute target"),
		ValidArgsFunction: env.completer(computeNames),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			q := fmt.Sprintf("Remove compute target %s from the workspace?", name)
			if force {
				q = fmt.Sprintf("Remove compute target %s from the workspace, canceling its active runs?", name)
			}
			if err := env.confirm(yes, q, verb+" compute "+name); err != nil {
				return err
			}
			if err := c.DeleteCompute(cmd.Context(), name, force); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Removed compute %s\n", name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute target name (or give it as the first argument)")
	cmd.Flags().BoolVar(&force, "force", false, "also when runs are active: they are canceled")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
