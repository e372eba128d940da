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
	"github.com/hangar-ml/hangar/internal/job"
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
	return componentCommands().group(env, cmd, newComponentCreateCmd(env))
}

func componentCommands() assetCommands[component.Version] {
	return assetCommands[component.Version]{
		kind: component.Kind, plural: "components", example: "train", everyOf: "every version of a component",
		archiveLong: `An archived version is left out of component list and of @latest, and still resolves when named
by its version (pipelines that name it keep working). Without --version every version is archived.`,
		columns: []string{"NAME", "VERSION", "TYPE", "DISPLAY NAME", "INPUTS", "OUTPUTS", "CREATED"},
		row: func(v component.Version) []string {
			return []string{v.Name, v.Version, v.Type, v.DisplayName, strings.Join(slices.Sorted(maps.Keys(v.Inputs)), ","),
				strings.Join(slices.Sorted(maps.Keys(v.Outputs)), ","), fmtTime(&v.CreatedAt)}
		},
		show:     showComponent,
		versions: func(c *api.Client) versionClient[component.Version] { return c.Components },
	}
}

type componentCreateFlags struct {
	file, name, version string
	root                string // --spec-root
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
	fl.StringVarP(&f.version, "version", "v", "", "version, a string such as 3 or 0.0.1 (default: the file's, else the next integer)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a field of the file: --set key.path=value (repeatable)")
	addSpecRootFlag(cmd, &f.root)
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// componentSpec reads the file and applies the flags, checked as far as the client can.
func componentSpec(f componentCreateFlags, warn io.Writer) (*component.Spec, error) {
	parse := func(file string, sets []string) (*component.Spec, []string, error) {
		return spec.ParseComponentFile(file, sets, specFiles(f.root)...)
	}
	sp, err := parseAssetFile(f.file, f.sets, parse, warn)
	if err != nil {
		return nil, err
	}
	applyFlags(flagOverride{&sp.Name, f.name}, flagOverride{&sp.Version, f.version})
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
	v, err := c.Components.Create(ctx, api.CreateComponentRequest{Spec: *sp, Source: f.file})
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
	return uploadSteps(ctx, u, sp.Graph.Steps, func(st *component.Step) *job.Spec { return &st.Spec })
}

func showComponent(w io.Writer, v *component.Version) error {
	rows := [][2]string{{"Name", v.Name}, {"Version", v.Version}, {"Type", v.Type}, {"Display name", v.DisplayName},
		{"Description", v.Description}, {"Deterministic", fmt.Sprint(v.Deterministic)}, {"Source", v.Source}}
	if v.Job != nil {
		rows = append(rows, [2]string{"Command", v.Job.Command}, [2]string{"Code snapshot", v.Job.CodeSnapshot},
			[2]string{"Environment", environmentText(v.Job.Environment.Ref, v.Job.Environment.Image)})
	}
	rows = append(rows, [2]string{"Archived", assetArchivedText(v.Archived)}, [2]string{"Created", fmtTime(&v.CreatedAt)},
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
	section(w, "Tags", fmtStrings(v.Tags, ": "))
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
