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
	"github.com/hangar-ml/hangar/internal/datastore"
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
	return dataCommands().group(env, cmd, newDataCreateCmd(env), newDataImportCmd(env))
}

func dataCommands() assetCommands[dataset.Version] {
	return assetCommands[dataset.Version]{
		kind: dataset.Kind, plural: "data assets", example: "iris", everyOf: "every version of one",
		archiveLong: `An archived version is left out of data list and of @latest, and still resolves when named by
its version (jobs that name it keep working). Without --version every version is archived.`,
		columns: fileAssetColumns,
		row: func(v dataset.Version) []string {
			files, size := fmt.Sprint(v.Files), humanBytes(v.Size)
			if v.Manifest == "" { // read in place: the workspace holds no files of it
				files, size = "-", "-"
			}
			return []string{v.Name, v.Version, v.Type, files, size, v.Source, fmtTime(&v.CreatedAt)}
		},
		show:     showData,
		versions: func(c *api.Client) versionClient[dataset.Version] { return c.Data },
	}
}

type dataCreateFlags struct {
	fileAssetFlags
	datastore string
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
	f.add(cmd.Flags(), "data", "data asset", "local file or folder, a job output, a datastore path or an http(s) URL",
		"uri_folder (default), uri_file or mltable")
	cmd.Flags().StringVar(&f.datastore, "datastore", "", "where a local path is uploaded: workspaceblobstore (the default, and the only one)")
	return cmd
}

var dataAsset = fileAssetKind[dataset.Spec]{
	kind: dataset.Kind, noun: "data", parse: spec.ParseDataFile,
	fields: func(sp *dataset.Spec) assetFields {
		return assetFields{&sp.Name, &sp.Version, &sp.Type, &sp.Description, &sp.Path}
	},
	remote: isRemoteData, checkType: dataset.CheckType,
	noName: "which data asset? give --name (or a file with name:)",
	noPath: "where is the data? give --path (a local file or folder, a job output, a datastore path or an http(s) URL)",
}

// dataSpec builds what to register from the file and the flags, checked as far as the client can.
func dataSpec(f dataCreateFlags, warn io.Writer) (*dataset.Spec, error) {
	return dataAsset.spec(f.fileAssetFlags, warn, func(sp *dataset.Spec) []flagOverride {
		return []flagOverride{{&sp.Datastore, f.datastore}}
	})
}

func isRemoteData(p string) bool {
	lower := strings.ToLower(p)
	return strings.HasPrefix(lower, "azureml:") || strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") ||
		datastore.IsObjectURI(p)
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
		if req.Manifest, err = e.uploadAssetFiles(ctx, c, "data "+sp.Name, sp.Path, !st.IsDir()); err != nil {
			return err
		}
	}
	v, err := c.Data.Create(ctx, req)
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
	if v.Location != nil {
		return "read where it is, in " + storeOf(v.Location)
	}
	if v.Manifest == "" {
		return "read in place from " + v.Path
	}
	return fmt.Sprintf("%d files (%s)", v.Files, humanBytes(v.Size))
}

// storeOf names an object-store location: its URI, and the datastore whose credentials read it.
func storeOf(l *datastore.Location) string {
	if l.Datastore == "" {
		return l.URI() + " (no datastore: the node's own identity)"
	}
	return l.URI() + " (datastore " + l.Datastore + ")"
}

func showData(w io.Writer, v *dataset.Version) error {
	var at, ds string
	if v.Location != nil {
		at, ds = v.Location.URI(), orDefault(v.Location.Datastore, "none: the node's own identity")
	}
	if err := kv(w, [][2]string{{"Name", v.Name}, {"Version", v.Version}, {"Type", v.Type},
		{"Contents", dataContents(v)}, {"Path", v.Path}, {"Location", at}, {"Datastore", ds}, {"Source", v.Source},
		{"Imported from", importedFrom(v)},
		{"Description", v.Description}, {"Archived", assetArchivedText(v.Archived)},
		{"Created", fmtTime(&v.CreatedAt)}, {"Use as", v.ID()}}); err != nil {
		return err
	}
	section(w, "Tags", fmtStrings(v.Tags, ": "))
	section(w, "Properties", fmtStrings(v.Properties, ": "))
	return nil
}

// importedFrom says where an imported version came from: the connection and the query's first
// line, or the path ("" : not imported).
func importedFrom(v *dataset.Version) string {
	imp := v.Import
	if imp == nil {
		return ""
	}
	what := imp.Path
	if imp.Query != "" {
		q, _, more := strings.Cut(imp.Query, "\n")
		if more {
			q += " ..."
		}
		what = "query " + q
	}
	return fmt.Sprintf("connection %s, %s (job %s)", imp.Connection, what, imp.Job)
}
