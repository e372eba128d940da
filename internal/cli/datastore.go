package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newDatastoreCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "datastore",
		Short: "List, show and create datastores",
		Long: `Jobs and data assets address datastores as azureml://datastores/<name>/paths/<path>.
workspaceblobstore is always there: the workspace's own blob store, where uploads
(LocalUpload/<id>/<name>) and job outputs (azureml/<job>/<output>, or an output's own path:)
are written. A local_folder datastore is a folder on a shared filesystem that the nodes of the
compute targets it lists mount at the same path; inputs under it are read in place.
Azure storage types (azure_blob, azure_file, adls) cannot be reached from here.`,
		Example: `  hangar datastore list
  hangar datastore show workspaceblobstore
  hangar datastore create -f shared.yml`,
	}
	cmd.AddCommand(newDatastoreCreateCmd(env), newDatastoreListCmd(env), newDatastoreShowCmd(env))
	return groupCmd(cmd)
}

func newDatastoreCreateCmd(env *Env) *cobra.Command {
	var file, name string
	var sets []string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create or replace a local_folder datastore from a file",
		Long: `Create (or replace) a datastore from a YAML file:
  name: shared
  type: local_folder
  path: /shared/data          # absolute, the same on every node that mounts it
  computes: [local, gpu-vms]  # targets whose nodes mount it (default: local)`,
		Example: "  hangar datastore create -f shared.yml\n  hangar datastore create -f shared.yml --name shared2",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return env.createDatastore(cmd.Context(), file, name, sets)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "datastore YAML file (required)")
	cmd.Flags().StringVarP(&name, "name", "n", "", "datastore name (default: from the file)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field of the file: --set key.path=value (repeatable)")
	return cmd
}

func (e *Env) createDatastore(ctx context.Context, file, name string, sets []string) error {
	if file == "" {
		return usageError("give the datastore's file with -f")
	}
	d, warnings, err := spec.ParseDatastoreFile(file, sets)
	if err != nil {
		return specError(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	if name != "" {
		d.Name = name
	}
	if err := datastore.CheckName(d.Name); err != nil {
		return usageError("--name: %v", err)
	}
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	out, err := c.Datastores.Create(ctx, *d)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return e.printData(out, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "Created datastore %s (%s %s; mounted on %s) (use it as azureml://datastores/%s/paths/<path>)\n",
			out.Name, out.Type, out.Path, strings.Join(mounts(*out), ", "), out.Name)
		return err
	})
}

func mounts(d datastore.Datastore) []string {
	if d.Type != datastore.TypeLocalFolder {
		return nil
	}
	if len(d.Computes) == 0 {
		return datastore.DefaultComputes
	}
	return d.Computes
}

func newDatastoreListCmd(env *Env) *cobra.Command {
	return listCmd(env, "List datastores (workspaceblobstore first)", "  hangar datastore list\n  hangar datastore list -o json",
		func(ctx context.Context, c *api.Client) ([]datastore.Datastore, error) { return c.Datastores.List(ctx) },
		[]string{"NAME", "TYPE", "PATH", "MOUNTED ON", "DESCRIPTION"},
		func(d datastore.Datastore) []string {
			return []string{d.Name, d.Type, d.Path, strings.Join(mounts(d), ","), d.Description}
		})
}

func newDatastoreShowCmd(env *Env) *cobra.Command {
	var name string
	cmd := leaf[*datastore.Datastore]{
		Use:     "show NAME",
		Short:   "Show a datastore",
		Example: "  hangar datastore show workspaceblobstore\n  hangar datastore show shared -o yaml",
		Args:    nameArgs(&name, "datastore"),
		ask: func(ctx context.Context, c *api.Client, _ []string) (*datastore.Datastore, error) {
			return c.Datastores.Get(ctx, name)
		},
		human: func(w io.Writer, d *datastore.Datastore) error {
			created := ""
			if !d.Builtin {
				created = fmtTime(&d.CreatedAt)
			}
			if err := kv(w, [][2]string{{"Name", d.Name}, {"Type", d.Type}, {"Path", d.Path},
				{"Mounted on", strings.Join(mounts(*d), ", ")}, {"Description", d.Description},
				{"Created", created}, {"Use as", "azureml://datastores/" + d.Name + "/paths/<path>"}}); err != nil {
				return err
			}
			section(w, "Tags", fmtStrings(d.Tags, ": "))
			return nil
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", "datastore name (or give it as the argument)")
	return cmd
}
