package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newDataCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Register, list, show and archive data assets",
		Long: `A data asset is a registered file or folder with a name and integer versions (1, 2, 3...), of
type uri_file, uri_folder or mltable (a folder holding an MLTable file): from a local path
(uploaded content-addressed, like a job's inputs), a job's output (reused without copying), a
datastore path or an http(s) URL. Jobs name a version as azureml:NAME:VERSION or
azureml:NAME@latest (the highest version not archived).`,
		Example: `  hangar data create -f data.yml
  hangar data create --name iris --path ./iris --type uri_folder
  hangar data list
  hangar data show iris@latest`,
	}
	cmd.AddCommand(newDataCreateCmd(env), newDataListCmd(env), newDataShowCmd(env),
		newDataArchiveCmd(env, true), newDataArchiveCmd(env, false))
	return groupCmd(cmd)
}

type dataCreateFlags struct {
	file, name, version, path, typ, description, datastore string
	sets                                                   []string
}

func newDataCreateCmd(env *Env) *cobra.Command {
	var f dataCreateFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Register a data asset version from a local path, a job output or a datastore path",
		Long: `Register a data asset version, from a data YAML file (-f) or from flags; flags override the file.
--path is a local file or folder, or:
  azureml://jobs/<job>/outputs/<output>[/paths/<p>]   a job's output (its files, not copied)
  azureml://datastores/<datastore>/paths/<p>         a datastore path (workspaceblobstore: what
                                                     is there now; local_folder: read in place)
  https://...                                        a file jobs download (uri_file)
A local path is uploaded to workspaceblobstore (LocalUpload/<id>/<name>): only files the
workspace lacks travel. An mltable folder must hold an MLTable file. Without --version the
next integer is taken; registering a version that exists is refused.`,
		Example: `  hangar data create -f data.yml
  hangar data create --name titanic --path ./sample-data --type uri_folder
  hangar data create -n iris -p azureml://jobs/plucky_otter_k3x9q2mz/outputs/prepared`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return env.createData(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "data YAML file")
	fl.StringVarP(&f.name, "name", "n", "", "data asset name (default: from the file)")
	fl.StringVarP(&f.version, "version", "v", "", "version, an integer (default: the next one)")
	fl.StringVarP(&f.path, "path", "p", "", "local file or folder, a job output, a datastore path or an http(s) URL")
	fl.StringVarP(&f.typ, "type", "t", "", "uri_folder (default), uri_file or mltable")
	fl.StringVarP(&f.description, "description", "d", "", "description")
	fl.StringVar(&f.datastore, "datastore", "", "where a local path is uploaded: workspaceblobstore (the default, and the only one)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a field of the file: --set key.path=value (repeatable)")
	return cmd
}

// dataSpec builds what to register from the file and the flags, checked as far as the client can.
func dataSpec(f dataCreateFlags, warn io.Writer) (*dataset.Spec, error) {
	sp := &dataset.Spec{}
	if f.file != "" {
		parsed, warnings, err := spec.ParseDataFile(f.file, f.sets)
		if err != nil {
			return nil, specError(err)
		}
		for _, w := range warnings {
			fmt.Fprintf(warn, "warning: %s\n", w)
		}
		sp = parsed
	} else if len(f.sets) > 0 {
		return nil, usageError("--set changes a data file: give one with -f")
	}
	for _, o := range []struct {
		dst *string
		v   string
	}{{&sp.Name, f.name}, {&sp.Version, f.version}, {&sp.Type, f.typ}, {&sp.Description, f.description}, {&sp.Datastore, f.datastore}} {
		if o.v != "" {
			*o.dst = o.v
		}
	}
	if f.path != "" {
		sp.Path = f.path
		if !isRemoteData(f.path) {
			abs, err := filepath.Abs(f.path)
			if err != nil {
				return nil, err
			}
			sp.Path = abs
		}
	}
	switch {
	case sp.Name == "":
		return nil, usageError("which data asset? give --name (or a file with name:)")
	case sp.Path == "":
		return nil, usageError("where is the data? give --path (a local file or folder, a job output, a datastore path or an http(s) URL)")
	}
	if err := dataset.Kind.CheckName(sp.Name); err != nil {
		return nil, usageError("--name: %v", err)
	}
	var err error
	if sp.Type, err = dataset.CheckType(sp.Type); err != nil {
		return nil, usageError("--type: %v", err)
	}
	if sp.Version != "" {
		if sp.Version, err = dataset.Kind.ParseVersion(sp.Version); err != nil {
			return nil, usageError("--version: %v", err)
		}
	}
	return sp, nil
}

func isRemoteData(p string) bool {
	lower := strings.ToLower(p)
	return strings.HasPrefix(lower, "azureml:") || strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")
}

// checkLocalData says whether a local path fits the type, before anything is uploaded.
func checkLocalData(typ, p string) (fs.FileInfo, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	switch {
	case typ == dataset.URIFile && st.IsDir():
		return nil, fmt.Errorf("type uri_file: %s is a folder (use --type uri_folder)", p)
	case typ != dataset.URIFile && !st.IsDir():
		return nil, fmt.Errorf("type %s: %s is a file (use --type uri_file)", typ, p)
	case typ == dataset.MLTable:
		if _, err := os.Stat(filepath.Join(p, dataset.MLTableFile)); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("type mltable: %s has no %s file (an mltable folder holds an MLTable file describing how to read its data)", p, dataset.MLTableFile)
		}
	}
	return st, nil
}

func (e *Env) createData(ctx context.Context, f dataCreateFlags) error {
	sp, err := dataSpec(f, e.Stderr)
	if err != nil {
		return err
	}
	inFile := func(err error) error {
		if f.file != "" {
			return fmt.Errorf("%s: %w", f.file, err)
		}
		return err
	}
	req := api.CreateDataRequest{Spec: *sp}
	var st fs.FileInfo
	if !isRemoteData(sp.Path) {
		if st, err = checkLocalData(sp.Type, sp.Path); err != nil {
			return inFile(fmt.Errorf("data %s: path: %w", sp.Name, err))
		}
	}
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	if st != nil {
		u := e.newUploader(c)
		opts := snapshot.ScanOptions{IgnoreFiles: []string{}, DefaultIgnores: []string{}, Cache: u.cache}
		req.Manifest, err = u.tree(ctx, "data "+sp.Name, sp.Path, !st.IsDir(), opts)
		u.close()
		if err != nil {
			return err
		}
	}
	v, err := c.CreateData(ctx, req)
	if err != nil {
		return inFile(err)
	}
	return e.printData(v, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "Created data asset %s version %s (%s): %s (use it as %s)\n",
			v.Name, v.Version, v.Type, dataContents(v), v.ID())
		return err
	})
}

// dataContents says what a version holds: its files, or where it is read.
func dataContents(v *dataset.Version) string {
	if v.Manifest == "" {
		return "read in place from " + v.Path
	}
	return fmt.Sprintf("%d files (%s)", v.Files, humanBytes(v.Size))
}

func newDataListCmd(env *Env) *cobra.Command {
	var name string
	var archived bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List data assets (the latest version of each), or the versions of one",
		Example: `  hangar data list
  hangar data list --name iris --include-archived -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			vs, err := c.ListData(cmd.Context(), name, archived)
			if err != nil {
				return err
			}
			return env.printData(vs, func(w io.Writer) error { return dataTable(w, vs, archived) })
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "list this data asset's versions")
	cmd.Flags().BoolVar(&archived, "include-archived", false, "include archived versions")
	return cmd
}

func dataTable(w io.Writer, vs []dataset.Version, archived bool) error {
	header := []string{"NAME", "VERSION", "TYPE", "FILES", "SIZE", "SOURCE", "CREATED"}
	if archived {
		header = append(header, "ARCHIVED")
	}
	rows := make([][]string, 0, len(vs))
	for _, v := range vs {
		files, size := fmt.Sprint(v.Files), humanBytes(v.Size)
		if v.Manifest == "" {
			files, size = "-", "-"
		}
		row := []string{v.Name, v.Version, v.Type, files, size, v.Source, fmtTime(&v.CreatedAt)}
		if archived {
			row = append(row, fmt.Sprint(v.Archived))
		}
		rows = append(rows, row)
	}
	return table(w, header, rows)
}

func newDataShowCmd(env *Env) *cobra.Command {
	m := assetTarget{kind: dataset.Kind}
	cmd := &cobra.Command{
		Use:   "show NAME[:VERSION|@latest]",
		Short: "Show a data asset version (default: the latest)",
		Example: `  hangar data show iris
  hangar data show iris:2 -o yaml
  hangar data show --name iris --version 2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, version, err := m.resolve()
			if err != nil {
				return err
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			v, err := c.GetData(cmd.Context(), name, version)
			if err != nil {
				return err
			}
			return env.printData(v, func(w io.Writer) error { return showData(w, v) })
		},
	}
	m.flags(cmd)
	return cmd
}

func showData(w io.Writer, v *dataset.Version) error {
	archived := ""
	if v.Archived {
		archived = "yes (still usable by its version; not @latest)"
	}
	if err := kv(w, [][2]string{{"Name", v.Name}, {"Version", v.Version}, {"Type", v.Type},
		{"Contents", dataContents(v)}, {"Path", v.Path}, {"Source", v.Source},
		{"Description", v.Description}, {"Archived", archived},
		{"Created", fmtTime(&v.CreatedAt)}, {"Use as", v.ID()}}); err != nil {
		return err
	}
	section(w, "Tags", sortedPairs(v.Tags))
	section(w, "Properties", sortedPairs(v.Properties))
	return nil
}

func newDataArchiveCmd(env *Env, archive bool) *cobra.Command {
	var name, version string
	verb, short, done := "archive", "Archive a data asset version, or every version of one", "Archived"
	long := `An archived version is left out of data list and of @latest, and still resolves when named by
its version (jobs that name it keep working). Without --version every version is archived.`
	if !archive {
		verb, short, done = "restore", "Restore an archived data asset version, or every version of one", "Restored"
		long = "Undo data archive: the version is listed again and counts for @latest."
	}
	cmd := &cobra.Command{
		Use:     verb + " NAME",
		Short:   short,
		Long:    long,
		Example: fmt.Sprintf("  hangar data %s --name iris --version 1\n  hangar data %s iris", verb, verb),
		Args:    nameArgs(&name, "data asset"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if version != "" {
				v, err := dataset.Kind.ParseVersion(version)
				if err != nil {
					return usageError("--version: %v", err)
				}
				version = v
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			vs, err := c.ArchiveData(cmd.Context(), name, version, archive)
			if err != nil {
				return err
			}
			which := "every version of data asset " + name
			if version != "" {
				which = "data asset " + name + " version " + version
			}
			return env.printData(vs, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s %s\n", done, which)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "data asset name (or give it as the first argument)")
	cmd.Flags().StringVarP(&version, "version", "v", "", "one version (default: every version)")
	return cmd
}
