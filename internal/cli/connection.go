package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newConnectionCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "connection",
		Short: "Create, list, show and delete workspace connections (the sources of data imports)",
		Long: `A connection names an external source that hangar data import reads, with its credentials:
an S3 bucket (type: s3, Azure's file) for a file_system import, or a PostgreSQL database
(type: postgresql, Hangar's own) for a database import. The credentials are sealed with the
workspace key and never shown; only an import run's supervisor gets them, while it runs.
Azure's azure_sql_db, snowflake and other types are refused.`,
		Example: `  hangar connection create -f pg.yml
  hangar connection list
  hangar connection show sales_db
  hangar connection delete sales_db`,
	}
	cmd.AddCommand(newConnectionCreateCmd(env), newConnectionListCmd(env), newConnectionShowCmd(env), newConnectionDeleteCmd(env))
	return groupCmd(cmd)
}

func newConnectionCreateCmd(env *Env) *cobra.Command {
	var file, name string
	var sets []string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create or replace a connection from a file",
		Long: `Create (or replace) a connection from a YAML file (Azure's connection schema):
  name: sales_db
  type: postgresql                      # Hangar's; or s3 (Azure's)
  target: postgresql://db.example.com:5432/sales
  credentials:
    type: username_password             # s3: access_key, access_key_id, secret_access_key
    username: reader
    password: ...`,
		Example: "  hangar connection create -f pg.yml\n  hangar connection create -f s3.yml --name raw_bucket",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return env.createConnection(cmd.Context(), file, name, sets)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "connection YAML file (required)")
	cmd.Flags().StringVarP(&name, "name", "n", "", "connection name (default: from the file)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field of the file: --set key.path=value (repeatable)")
	return cmd
}

func (e *Env) createConnection(ctx context.Context, file, name string, sets []string) error {
	if file == "" {
		return usageError("give the connection's file with -f")
	}
	c, cred, warnings, err := spec.ParseConnectionFile(file, sets)
	if err != nil {
		return specError(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	if name != "" {
		if err := connection.CheckName(name); err != nil {
			return usageError("--name: %v", err)
		}
		c.Name = name
	}
	cl, err := e.client(ctx)
	if err != nil {
		return err
	}
	out, err := cl.Connections.Create(ctx, api.CreateConnectionRequest{Connection: *c, Credentials: *cred})
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) && ae.Code == api.CodeInvalid {
			return fmt.Errorf("%s: %s", file, ae.Message)
		}
		return err
	}
	return e.printData(out, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "Created connection %s (%s %s; credentials %s, sealed) (use it as azureml:%s)\n",
			out.Name, out.Type, out.Target, out.CredentialType, out.Name)
		return err
	})
}

func newConnectionListCmd(env *Env) *cobra.Command {
	return listCmd(env, "List connections", "  hangar connection list\n  hangar connection list -o json",
		func(ctx context.Context, c *api.Client) ([]connection.Connection, error) {
			return c.Connections.List(ctx)
		},
		[]string{"NAME", "TYPE", "TARGET", "CREDENTIALS", "CREATED"},
		func(c connection.Connection) []string {
			return []string{c.Name, c.Type, c.Target, c.CredentialType, fmtTime(&c.CreatedAt)}
		})
}

func newConnectionShowCmd(env *Env) *cobra.Command {
	var name string
	cmd := leaf[*connection.Connection]{
		Use:     "show NAME",
		Short:   "Show a connection (its credentials' type, never their values)",
		Example: "  hangar connection show sales_db\n  hangar connection show sales_db -o yaml",
		Args:    nameArgs(&name, "connection"),
		ask: func(ctx context.Context, c *api.Client, _ []string) (*connection.Connection, error) {
			return c.Connections.Get(ctx, name)
		},
		human: showConnection,
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", "connection name (or give it as the argument)")
	return cmd
}

func showConnection(w io.Writer, c *connection.Connection) error {
	if err := kv(w, [][2]string{{"Name", c.Name}, {"Type", c.Type}, {"Target", c.Target},
		{"Credentials", c.CredentialType + " (sealed; never shown)"}, {"Description", c.Description},
		{"Created", fmtTime(&c.CreatedAt)}, {"Use as", "azureml:" + c.Name}}); err != nil {
		return err
	}
	section(w, "Tags", fmtStrings(c.Tags, ": "))
	return nil
}

func newConnectionDeleteCmd(env *Env) *cobra.Command {
	var name string
	cmd := leaf[*connection.Connection]{
		Use:     "delete NAME",
		Short:   "Delete a connection (refused while an import that reads it has not ended)",
		Example: "  hangar connection delete sales_db",
		Args:    nameArgs(&name, "connection"),
		ask: func(ctx context.Context, c *api.Client, _ []string) (*connection.Connection, error) {
			return c.Connections.Delete(ctx, name)
		},
		human: func(w io.Writer, c *connection.Connection) error {
			_, err := fmt.Fprintf(w, "Deleted connection %s\n", c.Name)
			return err
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", "connection name (or give it as the argument)")
	return cmd
}
