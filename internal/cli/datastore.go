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
		Short: "List, show, create and delete datastores",
		Long: `Jobs and data assets address datastores as azureml://datastores/<name>/paths/<path>.
workspaceblobstore is always there: the workspace's own blob store, where uploads
(LocalUpload/<id>/<name>) and job outputs (azureml/<job>/<output>, or an output's own path:)
are written. A local_folder datastore is a folder on a shared filesystem that the nodes of the
compute targets it lists mount at the same path; inputs under it are read in place.
An object-store datastore (azure_blob, azure_data_lake_gen2, s3, gcs) is a container or bucket
that nodes read and write directly with its credentials, which are sealed and never shown.`,
		Example: `  hangar datastore list
  hangar datastore show workspaceblobstore
  hangar datastore create -f blob.yml
  hangar datastore delete old_bucket --yes`,
	}
	cmd.AddCommand(newDatastoreCreateCmd(env), newDatastoreListCmd(env), newDatastoreShowCmd(env), newDatastoreDeleteCmd(env))
	return groupCmd(cmd)
}

func newDatastoreCreateCmd(env *Env) *cobra.Command {
	var file, name string
	var sets []string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create or replace a datastore from a file",
		Long: `Create (or replace) a datastore from a YAML file, Azure's for azure_blob and
azure_data_lake_gen2, Hangar's for s3, gcs and local_folder:
  name: shared
  type: local_folder
  path: /shared/data          # absolute, the same on every node that mounts it
  computes: [local, gpu-vms]  # targets whose nodes mount it (default: local)

  name: blob_example
  type: azure_blob
  account_name: mytestblobstore
  container_name: data-container
  credentials:
    account_key: ...          # or sas_token, or tenant_id + client_id + client_secret

  name: s3_example
  type: s3
  bucket: my-bucket
  endpoint_url: https://s3.example.com   # any S3-compatible server (default: AWS)
  region: us-east-1
  credentials:
    access_key_id: ...
    secret_access_key: ...

Without credentials, nodes use their own identity (environment, instance metadata).
A replace is the whole datastore: credentials the new file leaves out are dropped.
Credentials are sealed with the workspace key and never shown.`,
		Example: "  hangar datastore create -f blob.yml\n  hangar datastore create -f shared.yml --name shared2",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return env.createDatastore(cmd.Context(), file, name, sets)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "datastore YAML file (required)")
	cmd.Flags().StringVarP(&name, "name", "n", "", "datastore name (default: from the file)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field of the file (not a credential): --set key.path=value (repeatable)")
	return cmd
}

func (e *Env) createDatastore(ctx context.Context, file, name string, sets []string) error {
	if file == "" {
		return usageError("give the datastore's file with -f")
	}
	f, warnings, err := spec.ParseDatastoreFile(file, sets)
	if err != nil {
		return specError(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	d := f.Datastore
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
	out, err := c.Datastores.Create(ctx, d, f.Credentials)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return e.printData(out, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "Created datastore %s (%s %s; %s) (use it as azureml://datastores/%s/paths/<path>)\n",
			out.Name, out.Type, location(*out), access(*out), out.Name)
		return err
	})
}

// location is where a datastore's data lies: a local_folder's path, an object store's URI.
func location(d datastore.Datastore) string {
	if datastore.IsObjectType(d.Type) {
		return d.Locate("").URI()
	}
	return d.Path
}

// access says how nodes reach a datastore: the targets mounting a local_folder, an object
// store's kind of credentials.
func access(d datastore.Datastore) string {
	switch {
	case d.Type == datastore.TypeLocalFolder:
		return "mounted on " + strings.Join(mounts(d), ", ")
	case !datastore.IsObjectType(d.Type):
		return "the workspace's own"
	case d.CredentialKind == "":
		return "credentials: the node's identity"
	}
	return "credentials: " + d.CredentialKind
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
		[]string{"NAME", "TYPE", "LOCATION", "ACCESS", "DESCRIPTION"},
		func(d datastore.Datastore) []string {
			return []string{d.Name, d.Type, location(d), access(d), d.Description}
		})
}

func newDatastoreShowCmd(env *Env) *cobra.Command {
	var name string
	cmd := leaf[*datastore.Datastore]{
		Use:     "show NAME",
		Short:   "Show a datastore (the kind of its credentials, never their values)",
		Example: "  hangar datastore show workspaceblobstore\n  hangar datastore show shared -o yaml",
		Args:    nameArgs(&name, "datastore"),
		ask: func(ctx context.Context, c *api.Client, _ []string) (*datastore.Datastore, error) {
			return c.Datastores.Get(ctx, name)
		},
		human: func(w io.Writer, d *datastore.Datastore) error {
			if err := kv(w, datastoreRows(d)); err != nil {
				return err
			}
			section(w, "Tags", fmtStrings(d.Tags, ": "))
			return nil
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", "datastore name (or give it as the argument)")
	return cmd
}

func datastoreRows(d *datastore.Datastore) [][2]string {
	created, used := "", ""
	if !d.Builtin {
		created = fmtTime(&d.CreatedAt)
	}
	if d.LastUsedBy != "" {
		used = d.LastUsedBy + " at " + fmtTime(&d.LastUsedAt)
	}
	rows := [][2]string{{"Name", d.Name}, {"Type", d.Type}}
	if datastore.IsObjectType(d.Type) {
		rows = append(rows, [2]string{"Location", location(*d)}, [2]string{"Endpoint", endpointOf(*d)}, [2]string{"Region", d.Region},
			[2]string{"Credentials", credentialKind(*d)}, [2]string{"Credentials last used by", used})
	} else {
		rows = append(rows, [2]string{"Path", d.Path}, [2]string{"Mounted on", strings.Join(mounts(*d), ", ")})
	}
	rows = append(rows, [2]string{"Description", d.Description}, [2]string{"Created", created},
		[2]string{"Use as", "azureml://datastores/" + d.Name + "/paths/<path>"})
	return rows
}

func credentialKind(d datastore.Datastore) string {
	if d.CredentialKind == "" {
		return "none: the node's identity"
	}
	return d.CredentialKind
}

// endpointOf is the service an object store is reached at ("" for AWS's and Google's own).
func endpointOf(d datastore.Datastore) string {
	return d.Locate("").Endpoint
}

func newDatastoreDeleteCmd(env *Env) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a datastore and its credentials",
		Long: `Delete datastore NAME and its sealed credentials. The data in its store stays. Jobs that name
it and have not started yet fail, saying it is gone; data assets on it can no longer be read.
workspaceblobstore cannot be deleted.`,
		Example: "  hangar datastore delete old_bucket --yes",
		Args:    cobra.ExactArgs(1),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if err := env.confirm(yes, "Delete datastore "+args[0]+"?", "delete datastore "+args[0]); err != nil {
				return err
			}
			if _, err := c.Datastores.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "Deleted datastore %s\n", args[0])
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
