package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/spec"
)

// newComputePutCmd is compute create, attach and update: each takes a compute YAML file; create
// takes az's flags instead (compute create -n cpu --type amlcompute --max-instances 4), and
// update changes the stored target with flags or --set alone.
func newComputePutCmd(env *Env, verb, short, example string, update bool) *cobra.Command {
	var file, name, root string
	var sets []string
	var noWait bool
	var fields *flagFields
	cmd := &cobra.Command{
		Use:     verb,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			flagSets, err := fields.sets()
			if err != nil {
				return err
			}
			var s *compute.Spec
			switch {
			case file == "" && update:
				s, err = storedComputeSpec(cmd.Context(), env, name, append(flagSets, sets...))
			default:
				s, err = computeSpecFromFlags(env, verb, file, name, flagSets, sets, root)
			}
			if err != nil {
				return err
			}
			return env.putCompute(cmd.Context(), s, file, update)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "compute YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "name (default: from the file)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field: --set key.path=value (repeatable)")
	addSpecRootFlag(cmd, &root)
	switch verb {
	case "create":
		fields = addFlagFields(cmd, computeCreateFields)
		addNoWaitFlag(cmd, &noWait)
	case "update":
		fields = addFlagFields(cmd, computeUpdateFields)
		addNoWaitFlag(cmd, &noWait)
	default:
		fields = addFlagFields(cmd, nil)
		_ = cmd.MarkFlagRequired("file")
	}
	return cmd
}

// computeSpecFromFlags reads the file (or, for create, az's flags alone) with the flags' fields
// set over it.
func computeSpecFromFlags(env *Env, verb, file, name string, flagSets, sets []string, root string) (*compute.Spec, error) {
	var s *compute.Spec
	var warnings []string
	var err error
	if file == "" {
		if verb != "create" {
			return nil, usageError("give --file (-f)")
		}
		if name == "" || !hasSetPrefix(append(flagSets, sets...), "type=") {
			return nil, usageError("give --file (-f), or --name and --type (az's flags: --size, --min-instances, --max-instances, ...)")
		}
		flagSets = append([]string{"name=" + strconv.Quote(name)}, flagSets...)
		s, warnings, err = spec.ParseCompute(commandLine, nil, ".", append(flagSets, sets...), specFiles(root)...)
	} else {
		s, warnings, err = spec.ParseComputeFile(file, append(flagSets, sets...), specFiles(root)...)
	}
	if err != nil {
		return nil, specError(err)
	}
	env.warn(warnings)
	if name != "" {
		s.Name = name
	}
	return s, nil
}

func hasSetPrefix(sets []string, prefix string) bool {
	for _, s := range sets {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// putCompute sends a target's spec (create or update) and prints what the server made of it.
func (e *Env) putCompute(ctx context.Context, s *compute.Spec, file string, update bool) error {
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	ct, err := c.Computes.Create(ctx, *s, update)
	if err != nil {
		return fileError(file, err)
	}
	return e.printData(ct, func(w io.Writer) error {
		done := map[bool]string{false: "Created", true: "Updated"}[update]
		fmt.Fprintf(w, "%s compute %s (%s)\n", done, ct.Name, ct.Type)
		if ct.Node != nil {
			fmt.Fprintf(w, "Node: %s, %s, %d cores, %s memory, %d GPUs\n", ct.Node.Hostname, ct.Node.OS,
				ct.Node.Cores, humanBytes(ct.Node.MemoryBytes), len(ct.Node.GPUs))
		}
		return nil
	})
}

// storedComputeSpec is the stored target name with sets applied (compute update without a file).
func storedComputeSpec(ctx context.Context, env *Env, name string, sets []string) (*compute.Spec, error) {
	if name == "" {
		return nil, usageError("give --file (-f), or --name with the fields to change (--max-instances 4, --set description=...)")
	}
	if len(sets) == 0 {
		return nil, usageError("nothing to change: give --file, or flags such as --max-instances, or --set key=value")
	}
	c, err := env.client(ctx)
	if err != nil {
		return nil, err
	}
	ct, err := c.Computes.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	if ct.Spec == nil {
		return nil, fmt.Errorf("compute %s: the workspace shows no definition to change (%s); give its file", name, ct.Type)
	}
	s := *ct.Spec
	if hasRedacted(s) {
		return nil, usageError("compute %s holds a password or key the workspace does not show: update it from its file (compute update -f FILE)", name)
	}
	if err := applyStoredSets(&s, sets, computeKind(computeSub(s))); err != nil {
		return nil, err
	}
	return &s, nil
}

// computeSub is the JSON key of a stored target's own settings.
func computeSub(s compute.Spec) string {
	switch {
	case s.Cluster != nil:
		return "cluster"
	case s.Instance != nil:
		return "instance"
	case s.Local != nil:
		return "local"
	case s.SSH != nil:
		return "ssh"
	case s.Slurm != nil:
		return "slurm"
	case s.Kubernetes != nil:
		return "kubernetes"
	case s.Serverless != nil:
		return "serverless"
	}
	return ""
}

// hasRedacted reports a spec the API showed with a secret replaced by ***.
func hasRedacted(s compute.Spec) bool {
	b, err := json.Marshal(s)
	return err != nil || strings.Contains(string(b), `"***"`)
}

// newComputeDeleteCmd is compute delete and detach.
func newComputeDeleteCmd(env *Env, verb, short string) *cobra.Command {
	var name string
	var force, yes, noWait bool
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Long: short + `. On a terminal it asks first; elsewhere (a script, CI) it refuses unless --yes is
given, and never waits for an answer.`,
		Example: fmt.Sprintf("  hangar compute %s gpu-box\n  hangar compute %s -n gpu-box --force --yes   # cancels its active runs", verb, verb),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			q := fmt.Sprintf("Remove compute target %s from the workspace?", name)
			if force {
				q = fmt.Sprintf("Remove compute target %s from the workspace, canceling its active runs?", name)
			}
			if err := env.confirm(yes, q, verb+" compute "+name); err != nil {
				return err
			}
			if err := c.Computes.Delete(cmd.Context(), name, force); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Removed compute %s\n", name)
			return nil
		}),
	}
	addComputeArg(env, cmd, &name, "compute target")
	cmd.Flags().BoolVar(&force, "force", false, "also when runs are active: they are canceled")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	addNoWaitFlag(cmd, &noWait)
	return cmd
}
