package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/spec"
)

type dataImportFlags struct {
	file, name, compute string
	sets                []string
	stream, raw         bool
}

func newDataImportCmd(env *Env) *cobra.Command {
	var f dataImportFlags
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Import data from a connection into a new data asset version (runs as a job)",
		Long: `Import a connection's data into a data asset, from Azure's data import file:
  type: mltable                          # a database source: the rows as CSV with an MLTable file
  name: sales_2026
  source:
    type: database
    query: select * from orders
    connection: azureml:sales_db        # a postgresql connection
  path: azureml://datastores/workspaceblobstore/paths/import/${{name}}
The import runs as a job on a compute target (local unless --compute): its supervisor reads the
source on the node, never in the server, and the data lands at path. When the job completes,
the data asset version it printed is registered; a failed import registers nothing.`,
		Example: `  hangar data import -f import.yml
  hangar data import -f import.yml --stream
  hangar data import -f import.yml --name sales --compute cpu-cluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return env.importData(cmd.Context(), f)
		},
	}
	cmd.Flags().StringVarP(&f.file, "file", "f", "", "data import YAML file (required)")
	cmd.Flags().StringVarP(&f.name, "name", "n", "", "data asset name (default: from the file)")
	cmd.Flags().StringVar(&f.compute, "compute", "", "compute target the import runs on (default: local, or the workspace's default)")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a field of the file: --set key.path=value (repeatable)")
	cmd.Flags().BoolVar(&f.stream, "stream", false, "follow the import's log until it ends; exit non-zero unless it Completed")
	addRawFlag(cmd, &f.raw)
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func (e *Env) importData(ctx context.Context, f dataImportFlags) error {
	s, warnings, err := spec.ParseDataImportFile(f.file, f.sets)
	if err != nil {
		return specError(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	if f.name != "" {
		s.Name = f.name
	}
	s.Compute = f.compute
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	d, err := c.Connections.Import(ctx, api.DataImportRequest{Spec: *s})
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) && (ae.Code == api.CodeInvalid || ae.Code == api.CodeConflict) {
			return fmt.Errorf("%s: %s", f.file, ae.Message)
		}
		return err
	}
	imp := d.Spec.Import
	if imp == nil {
		return fmt.Errorf("the server answered job %s without its import", d.ID)
	}
	ref := "azureml:" + imp.Asset + ":" + imp.Version
	if !f.stream {
		return e.printData(d, func(w io.Writer) error {
			fmt.Fprintf(w, "Created import job %s on compute %s (status %s): data asset %s version %s (%s) once it completes\n",
				d.ID, d.Compute, d.Status, imp.Asset, imp.Version, ref)
			fmt.Fprintf(w, "Follow it with: hangar job stream %s\n", d.ID)
			return nil
		})
	}
	if e.Output != "table" {
		if err := e.printData(d, nil); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.Stderr, "Created import job %s on compute %s: data asset %s version %s once it completes\n", d.ID, d.Compute, imp.Asset, imp.Version)
	if err := e.stream(ctx, c, d.ID, f.raw); err != nil {
		return err
	}
	v, err := c.Data.Get(ctx, imp.Asset, imp.Version)
	if err != nil {
		return fmt.Errorf("import job %s completed, but data asset %s: %w", d.ID, ref, err)
	}
	fmt.Fprintf(e.Stderr, "Registered data asset %s version %s (%s): %s (use it as %s)\n", v.Name, v.Version, v.Type, dataContents(v), ref)
	return nil
}
