package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newEnvironmentCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "environment",
		Aliases: []string{"env"},
		Short:   "Register and inspect environments (how a job's dependencies are provided)",
		Long: `An environment is a container image, a managed Python environment built from a conda file
or pip requirements (built once per node and cached by content), or your own interpreter.
Jobs refer to registered ones as azureml:NAME:VERSION or azureml:NAME@latest.`,
		Example: "  hangar environment create -f env.yml\n  hangar environment list",
	}
	cmd.AddCommand(newEnvCreateCmd(env), newEnvListCmd(env), newEnvShowCmd(env))
	return groupCmd(cmd)
}

// envCreateFields are az ml environment create's flags for an environment's fields.
var envCreateFields = []flagField{
	{flag: "image", short: "i", field: "image", help: "the container image"},
	{flag: "conda-file", field: "conda_file", help: "a conda environment file (built into a managed Python environment)"},
	{flag: "build-context", short: "b", field: "build.path", help: "a folder with a Dockerfile, built into an image"},
	{flag: "dockerfile-path", short: "d", field: "build.dockerfile_path", help: "the Dockerfile's path in --build-context (default Dockerfile)"},
	descriptionField,
	{flag: "os-type", field: "os_type", help: "linux (kept)"},
}

func newEnvCreateCmd(env *Env) *cobra.Command {
	var file, name, version, root string
	var sets []string
	var fields *flagFields
	var e *job.Environment
	cmd := leaf[*api.EnvironmentVersion]{
		Use:   "create",
		Short: "Register an environment version from a YAML file, or from --name and --image, --conda-file or --build-context",
		Example: `  hangar environment create -f env.yml
  hangar environment create -f env.yml --name sklearn --version 2
  hangar environment create -n sklearn --conda-file conda.yml --image python:3.12`,
		check: func(*cobra.Command, []string) error {
			flagSets, err := fields.sets()
			if err != nil {
				return err
			}
			sets = append(flagSets, sets...)
			var warnings []string
			switch {
			case file != "":
				e, warnings, err = spec.ParseEnvironmentFile(file, sets, specFiles(root)...)
			case name == "" || !fields.given():
				return usageError("give --file (-f), or --name with --image, --conda-file or --build-context")
			default:
				e, warnings, err = spec.ParseEnvironment(commandLine, nil, ".", append([]string{"name=" + strconv.Quote(name)}, sets...), specFiles(root)...)
			}
			if err != nil {
				return specError(err)
			}
			env.warn(warnings)
			if name != "" {
				e.Name = name
			}
			if version != "" {
				e.Version = version
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.EnvironmentVersion, error) {
			ev, err := c.Environments.Create(ctx, *e)
			return ev, fileError(file, err)
		},
		human: func(w io.Writer, ev *api.EnvironmentVersion) error {
			_, err := fmt.Fprintf(w, "Created environment %s version %s (use it as azureml:%s:%s)\n", ev.Name, ev.Version, ev.Name, ev.Version)
			return err
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&file, "file", "f", "", "environment YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "name (default: from the file)")
	cmd.Flags().StringVarP(&version, "version", "v", "", "version (default: from the file, else the next integer)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field: --set key.path=value (repeatable)")
	addSpecRootFlag(cmd, &root)
	fields = addFlagFields(cmd, envCreateFields)
	return cmd
}

func newEnvListCmd(env *Env) *cobra.Command {
	var name string
	cmd := leaf[[]api.EnvironmentVersion]{
		Use:     "list",
		Short:   "List environments and their versions",
		Example: "  hangar environment list\n  hangar environment list -n sklearn -o json",
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]api.EnvironmentVersion, error) {
			return c.Environments.List(ctx, name)
		},
		human: func(w io.Writer, evs []api.EnvironmentVersion) error {
			return tableOf(w, []string{"NAME", "VERSION", "KIND", "CREATED"}, evs, func(e api.EnvironmentVersion) []string {
				return []string{e.Name, e.Version, envKind(e), fmtTime(&e.CreatedAt)}
			})
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", "only this environment's versions")
	return cmd
}

func newEnvShowCmd(env *Env) *cobra.Command {
	var name, version, label string
	cmd := leaf[*api.EnvironmentVersion]{
		Use:     "show NAME",
		Short:   "Show an environment version (default: the latest)",
		Example: "  hangar environment show sklearn\n  hangar environment show -n sklearn --version 2 -o yaml",
		Args:    nameArgs(&name, "environment"),
		check: func(*cobra.Command, []string) error {
			if label != "" && label != "latest" {
				return usageError("--label %q: an environment's only label is latest", label)
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.EnvironmentVersion, error) {
			return c.Environments.Get(ctx, name, version)
		},
		human: showEnvironment,
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", "environment name (or give it as the first argument)")
	cmd.Flags().StringVarP(&version, "version", "v", "", "version (default: latest)")
	cmd.Flags().StringVarP(&label, "label", "l", "", "latest (the default)")
	return cmd
}

func envKind(e api.EnvironmentVersion) string {
	s := e.Spec
	var parts []string
	if s.Image != "" {
		parts = append(parts, "image "+s.Image)
	}
	if s.CondaSpec != "" {
		parts = append(parts, "conda file")
	}
	if s.RequirementsText != "" {
		parts = append(parts, "requirements")
	}
	if s.BuildPath != "" {
		parts = append(parts, "docker build")
	}
	if s.InterpreterPath != "" {
		parts = append(parts, "interpreter "+s.InterpreterPath)
	} else if s.UserManagedDependencies {
		parts = append(parts, "user managed")
	}
	return strings.Join(parts, " + ")
}

func showEnvironment(w io.Writer, e *api.EnvironmentVersion) error {
	if err := kv(w, [][2]string{{"Name", e.Name}, {"Version", e.Version}, {"Kind", envKind(*e)},
		{"Description", e.Spec.Description}, {"Created", fmtTime(&e.CreatedAt)},
		{"Use as", "azureml:" + e.Name + ":" + e.Version}}); err != nil {
		return err
	}
	if e.Spec.CondaSpec != "" {
		section(w, "Conda file", strings.Split(strings.TrimRight(e.Spec.CondaSpec, "\n"), "\n"))
	}
	if e.Spec.RequirementsText != "" {
		section(w, "Requirements", strings.Split(strings.TrimRight(e.Spec.RequirementsText, "\n"), "\n"))
	}
	return nil
}
