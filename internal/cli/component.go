package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newComponentCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "component",
		Short: "Register, list and show components (reusable pipeline steps)",
		Long: `A component is a reusable step with typed inputs and outputs, in Azure ML's component file
format: type: command (a command, its code folder and environment) or type: pipeline (steps of
its own). It is registered with a name and integer versions (1, 2, 3...); its code folder is
uploaded content-addressed and kept with the version. A pipeline step names one as
component: azureml:NAME:VERSION or azureml:NAME@latest (the highest version not archived).`,
		Example: `  hangar component create -f train.yml
  hangar component list
  hangar component show train@latest`,
	}
	cmd.AddCommand(newComponentCreateCmd(env), newComponentListCmd(env), newComponentShowCmd(env),
		newComponentArchiveCmd(env, true), newComponentArchiveCmd(env, false))
	return groupCmd(cmd)
}

type componentCreateFlags struct {
	file, name, version string
	sets                []string
}

func newComponentCreateCmd(env *Env) *cobra.Command {
	var f componentCreateFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Register a component version from a component file",
		Long: `Register a component version from a component YAML file (-f); --name and --version override
the file's. The code folder (and every step's, for a pipeline component) is uploaded first;
only files the workspace does not have yet are sent. Without a version the next integer is
taken; registering a version that exists is refused.`,
		Example: `  hangar component create -f train.yml
  hangar component create -f train.yml --name train --version 3
  hangar component create -f train.yml --set environment=azureml:sklearn@latest`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return env.createComponent(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "component YAML file")
	fl.StringVarP(&f.name, "name", "n", "", "component name (default: from the file)")
	fl.StringVarP(&f.version, "version", "v", "", "version, an integer (default: the file's, else the next one)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a field of the file: --set key.path=value (repeatable)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// componentSpec reads the file and applies the flags, checked as far as the client can.
func componentSpec(f componentCreateFlags, warn io.Writer) (*component.Spec, error) {
	sp, warnings, err := spec.ParseComponentFile(f.file, f.sets)
	if err != nil {
		return nil, specError(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(warn, "warning: %s\n", w)
	}
	if f.name != "" {
		sp.Name = f.name
	}
	if f.version != "" {
		sp.Version = f.version
	}
	if sp.Name == "" {
		return nil, usageError("which component? give --name (or a file with name:)")
	}
	if err := component.Kind.CheckName(sp.Name); err != nil {
		return nil, usageError("--name: %v", err)
	}
	if sp.Version != "" {
		if sp.Version, err = component.Kind.ParseVersion(sp.Version); err != nil {
			return nil, fmt.Errorf("%s: version: %w", f.file, err)
		}
	}
	return sp, nil
}

func (e *Env) createComponent(ctx context.Context, f componentCreateFlags) error {
	sp, err := componentSpec(f, e.Stderr)
	if err != nil {
		return err
	}
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	if err := e.uploadComponent(ctx, c, sp); err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	v, err := c.CreateComponent(ctx, api.CreateComponentRequest{Spec: *sp, Source: f.file})
	if err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	return e.printData(v, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "Created %s component %s version %s (use it as component: azureml:%s)\n", v.Type, v.Name, v.Version, v.ID())
		return err
	})
}

// uploadComponent uploads a component's code folder and local input defaults, or each step's
// of a pipeline component, recording their manifests in the spec (as job create does).
func (e *Env) uploadComponent(ctx context.Context, c *api.Client, sp *component.Spec) error {
	u := e.newUploader(c)
	defer u.close()
	if sp.Job != nil {
		if err := uploadSpec(ctx, u, sp.Job); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sp.Inputs)) {
		in := sp.Inputs[name]
		if in.IsLiteral() || !filepath.IsAbs(in.Path) {
			continue
		}
		st, err := os.Stat(in.Path)
		if err != nil {
			return fmt.Errorf("inputs.%s: %w", name, err)
		}
		if in.Manifest, err = u.data(ctx, name, in.Path, !st.IsDir()); err != nil {
			return err
		}
		sp.Inputs[name] = in
	}
	if sp.Graph == nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(sp.Graph.Steps)) {
		st := sp.Graph.Steps[name]
		st.Spec.Inputs = maps.Clone(st.Spec.Inputs)
		if err := uploadSpec(ctx, u, &st.Spec); err != nil {
			return fmt.Errorf("jobs.%s: %w", name, err)
		}
		sp.Graph.Steps[name] = st
	}
	return nil
}

func newComponentListCmd(env *Env) *cobra.Command {
	var name string
	var archived bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List components (the latest version of each), or the versions of one",
		Example: `  hangar component list
  hangar component list --name train --include-archived -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			vs, err := c.ListComponents(cmd.Context(), name, archived)
			if err != nil {
				return err
			}
			return env.printData(vs, func(w io.Writer) error { return componentTable(w, vs, archived) })
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "list this component's versions")
	cmd.Flags().BoolVar(&archived, "include-archived", false, "include archived versions")
	return cmd
}

func componentTable(w io.Writer, vs []component.Version, archived bool) error {
	header := []string{"NAME", "VERSION", "TYPE", "DISPLAY NAME", "INPUTS", "OUTPUTS", "CREATED"}
	if archived {
		header = append(header, "ARCHIVED")
	}
	rows := make([][]string, 0, len(vs))
	for _, v := range vs {
		row := []string{v.Name, v.Version, v.Type, v.DisplayName, strings.Join(slices.Sorted(maps.Keys(v.Inputs)), ","),
			strings.Join(slices.Sorted(maps.Keys(v.Outputs)), ","), fmtTime(&v.CreatedAt)}
		if archived {
			row = append(row, fmt.Sprint(v.Archived))
		}
		rows = append(rows, row)
	}
	return table(w, header, rows)
}

func newComponentShowCmd(env *Env) *cobra.Command {
	m := assetTarget{kind: component.Kind}
	cmd := &cobra.Command{
		Use:   "show NAME[:VERSION|@latest]",
		Short: "Show a component version (default: the latest)",
		Example: `  hangar component show train
  hangar component show train:2 -o yaml
  hangar component show --name train --version 2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, version, err := m.resolve()
			if err != nil {
				return err
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			v, err := c.GetComponent(cmd.Context(), name, version)
			if err != nil {
				return err
			}
			return env.printData(v, func(w io.Writer) error { return showComponent(w, v) })
		},
	}
	m.flags(cmd)
	return cmd
}

func showComponent(w io.Writer, v *component.Version) error {
	archived := ""
	if v.Archived {
		archived = "yes (still usable by its version; not @latest)"
	}
	rows := [][2]string{{"Name", v.Name}, {"Version", v.Version}, {"Type", v.Type}, {"Display name", v.DisplayName},
		{"Description", v.Description}, {"Deterministic", fmt.Sprint(v.Deterministic)}, {"Source", v.Source}}
	if v.Job != nil {
		rows = append(rows, [2]string{"Command", v.Job.Command}, [2]string{"Code snapshot", v.Job.CodeSnapshot},
			[2]string{"Environment", environmentText(v.Job.Environment.Ref, v.Job.Environment.Image)})
	}
	rows = append(rows, [2]string{"Archived", archived}, [2]string{"Created", fmtTime(&v.CreatedAt)},
		[2]string{"Use as", "component: azureml:" + v.ID()})
	if err := kv(w, rows); err != nil {
		return err
	}
	var ins []string
	for _, name := range slices.Sorted(maps.Keys(v.Inputs)) {
		ins = append(ins, name+": "+declaredInputText(v.Inputs[name]))
	}
	section(w, "Inputs", ins)
	var outs []string
	for _, name := range slices.Sorted(maps.Keys(v.Outputs)) {
		outs = append(outs, name+": "+v.Outputs[name].Type)
	}
	section(w, "Outputs", outs)
	if v.Graph != nil {
		section(w, "Steps", slices.Sorted(maps.Keys(v.Graph.Steps)))
	}
	section(w, "Tags", sortedPairs(v.Tags))
	return nil
}

// declaredInputText describes a declared input: its type and what constrains it.
func declaredInputText(in component.Input) string {
	parts := []string{in.Type}
	switch {
	case in.HasDefault && in.IsLiteral():
		parts = append(parts, "default "+in.Value)
	case in.HasDefault:
		parts = append(parts, "default "+in.Path)
	}
	if in.Optional {
		parts = append(parts, "optional")
	}
	if in.Min != nil {
		parts = append(parts, fmt.Sprintf("min %g", *in.Min))
	}
	if in.Max != nil {
		parts = append(parts, fmt.Sprintf("max %g", *in.Max))
	}
	if len(in.Enum) > 0 {
		parts = append(parts, "one of "+strings.Join(in.Enum, "|"))
	}
	return strings.Join(parts, ", ")
}

func environmentText(ref, image string) string {
	if ref != "" {
		return ref
	}
	return image
}

func newComponentArchiveCmd(env *Env, archive bool) *cobra.Command {
	var name, version string
	verb, short, done := "archive", "Archive a component version, or every version of a component", "Archived"
	long := `An archived version is left out of component list and of @latest, and still resolves when named
by its version (pipelines that name it keep working). Without --version every version is archived.`
	if !archive {
		verb, short, done = "restore", "Restore an archived component version, or every version of a component", "Restored"
		long = "Undo component archive: the version is listed again and counts for @latest."
	}
	cmd := &cobra.Command{
		Use:     verb + " NAME",
		Short:   short,
		Long:    long,
		Example: fmt.Sprintf("  hangar component %s --name train --version 1\n  hangar component %s train", verb, verb),
		Args:    nameArgs(&name, "component"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if version != "" {
				v, err := component.Kind.ParseVersion(version)
				if err != nil {
					return usageError("--version: %v", err)
				}
				version = v
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			vs, err := c.ArchiveComponent(cmd.Context(), name, version, archive)
			if err != nil {
				return err
			}
			which := "every version of component " + name
			if version != "" {
				which = "component " + name + " version " + version
			}
			return env.printData(vs, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s %s\n", done, which)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "component name (or give it as the first argument)")
	cmd.Flags().StringVarP(&version, "version", "v", "", "one version (default: every version)")
	return cmd
}
