package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newCuratedCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "curated-environment",
		Aliases: []string{"curated"},
		Short:   "Map Azure's curated environments to what this workspace runs them in (owners change it)",
		Long: `Azure's curated environments (environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest,
azureml://registries/azureml/environments/sklearn-1.5/labels/latest) cannot be fetched by a
self-hosted workspace. A job that names one runs in what this workspace's mapping says for its
name (the version or label does not matter): a registered environment, an image, a conda file
or an interpreter. Hangar ships defaults for the common CPU ones (scikit-learn, PyTorch and
XGBoost on the node's Python with its distribution's packages; TensorFlow, LightGBM and MLflow
built with pip once per node); owners replace them, remove them and add their own. A name may be
a pattern (* is any run of characters) and matches with or without the AzureML- prefix; the most
specific mapping wins. A curated name nothing maps runs in the host environment, with a warning
that says how to map it. See docs/environments.md.`,
		Example: `  hangar curated-environment list
  hangar curated-environment set sklearn-1.5 --environment team-sklearn:2
  hangar curated-environment set 'AzureML-tensorflow-*' --image tensorflow/tensorflow:2.16.1
  hangar curated-environment remove sklearn-1.5`,
	}
	cmd.AddCommand(newCuratedListCmd(env), newCuratedSetCmd(env), newCuratedRemoveCmd(env))
	return groupCmd(cmd)
}

func newCuratedListCmd(env *Env) *cobra.Command {
	return listCmd(env, "List the mappings in force, and the defaults owners removed",
		"  hangar curated-environment list\n  hangar curated-environment list -o json",
		func(ctx context.Context, c *api.Client) ([]api.CuratedEnvironment, error) {
			return c.Environments.Curated(ctx)
		},
		[]string{"NAME", "RUNS IN", "SET BY"},
		func(m api.CuratedEnvironment) []string {
			source, runs := "owner", m.RunsIn
			if m.Builtin {
				source = "default"
			}
			if m.Removed {
				runs = "(removed: runs in the host environment)"
			}
			return []string{m.Name, runs, source}
		})
}

// curatedFlags are the ways set names what a curated environment runs in: exactly one.
type curatedFlags struct {
	ref, image, condaFile, interpreter, file, root, description string
}

func (f curatedFlags) environment() (job.Environment, error) {
	given := 0
	for _, v := range []string{f.ref, f.image, f.condaFile, f.interpreter, f.file} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return job.Environment{}, usageError("give exactly one of --environment, --image, --conda-file, --interpreter and --file")
	}
	switch {
	case f.ref != "":
		return job.Environment{Ref: strings.TrimPrefix(f.ref, "azureml:")}, nil
	case f.image != "":
		return job.Environment{Image: f.image}, nil
	case f.interpreter != "":
		return job.Environment{InterpreterPath: f.interpreter}, nil
	case f.condaFile != "":
		b, err := os.ReadFile(f.condaFile)
		if err != nil {
			return job.Environment{}, fmt.Errorf("--conda-file: %w", err)
		}
		return job.Environment{CondaSpec: string(b)}, nil
	}
	// The file's name and version are not the mapping's (a name is set so that a file without one reads).
	e, _, err := spec.ParseEnvironmentFile(f.file, []string{"name=curated"}, specFiles(f.root)...)
	if err != nil {
		return job.Environment{}, specError(err)
	}
	e.Name, e.Version = "", ""
	return *e, nil
}

func newCuratedSetCmd(env *Env) *cobra.Command {
	var f curatedFlags
	var e job.Environment
	cmd := leaf[*api.CuratedEnvironment]{
		Use:   "set NAME",
		Short: "Map a curated environment's name (or a pattern) to an environment (owners)",
		Long: `Map a curated environment's name, or a pattern of names (* is any run of characters), to what
jobs that name it run in: a registered environment (--environment NAME[:VERSION], checked now and
read at each job, so @latest follows new versions), an image, a conda file, an interpreter on the
nodes, or an environment YAML file (--file, Azure's environment schema). NAME has no version, label
or registry: sklearn-1.5 maps azureml:AzureML-sklearn-1.5@latest and
azureml://registries/azureml/environments/sklearn-1.5/labels/latest alike. A mapping of the same
name as a default replaces it.`,
		Example: `  hangar curated-environment set sklearn-1.5 --environment team-sklearn:2
  hangar curated-environment set 'sklearn-*' --conda-file sklearn-conda.yml
  hangar curated-environment set 'AzureML-pytorch-*' --image pytorch/pytorch:2.3.0-cpu
  hangar curated-environment set minimal-py311-inference --interpreter /opt/python3.11/bin/python3`,
		Args: cobra.ExactArgs(1),
		check: func(*cobra.Command, []string) (err error) {
			e, err = f.environment()
			return err
		},
		ask: func(ctx context.Context, c *api.Client, args []string) (*api.CuratedEnvironment, error) {
			return c.Environments.SetCurated(ctx, api.CuratedEnvironment{Name: args[0], Environment: e, Description: f.description})
		},
		human: func(w io.Writer, m *api.CuratedEnvironment) error {
			_, err := fmt.Fprintf(w, "Curated environments named %s run in %s\n", m.Name, m.RunsIn)
			return err
		},
	}.cmd(env)
	cmd.Flags().StringVar(&f.ref, "environment", "", "a registered environment: NAME, NAME:VERSION or NAME@latest")
	cmd.Flags().StringVar(&f.image, "image", "", "a container image")
	cmd.Flags().StringVar(&f.condaFile, "conda-file", "", "a conda environment file (built once per node)")
	cmd.Flags().StringVar(&f.interpreter, "interpreter", "", "a Python interpreter on the nodes, used as it is")
	cmd.Flags().StringVarP(&f.file, "file", "f", "", "an environment YAML file (its name and version are not used)")
	cmd.Flags().StringVar(&f.description, "description", "", "what the mapping is for")
	addSpecRootFlag(cmd, &f.root)
	return cmd
}

func newCuratedRemoveCmd(env *Env) *cobra.Command {
	return leaf[*api.CuratedEnvironment]{
		Use:   "remove NAME",
		Short: "Remove an owner's mapping (a default of the same name applies again) or a default (owners)",
		Long: `Remove an owner's mapping: a default of the same name applies again. Removing a default leaves the
names it matched unmapped: their jobs run in the host environment, with a warning, until an owner
maps them again with set.`,
		Example: "  hangar curated-environment remove sklearn-1.5\n  hangar curated-environment remove 'mlflow*'",
		Args:    cobra.ExactArgs(1),
		ask: func(ctx context.Context, c *api.Client, args []string) (*api.CuratedEnvironment, error) {
			return c.Environments.RemoveCurated(ctx, args[0])
		},
		human: func(w io.Writer, m *api.CuratedEnvironment) error {
			var err error
			if m.Removed {
				_, err = fmt.Fprintf(w, "Removed %s: curated environments it matched are unmapped\n", m.Name)
			} else {
				_, err = fmt.Fprintf(w, "Removed the owner's %s: the default applies again (%s)\n", m.Name, m.RunsIn)
			}
			return err
		},
	}.cmd(env)
}
