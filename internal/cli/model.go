package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/transfer"
)

func newModelCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Register, list, show, download and delete models",
		Long: `A model is a registered set of files with a name and integer versions (1, 2, 3...): from a
local file or folder (uploaded content-addressed, like a job's inputs) or from a job's output
(azureml://jobs/<job>/outputs/<output>, reused without copying). Deployments and jobs name a
version as azureml:NAME:VERSION, azureml:NAME@latest (the newest version not archived) or
azureml:NAME@ALIAS (the version an alias names now: hangar model alias).`,
		Example: `  hangar model create -f model.yml
  hangar model create --name mnist --path azureml://jobs/plucky_otter_k3x9q2mz/outputs/model
  hangar model list
  hangar model show mnist@latest`,
	}
	return modelCommands().group(env, cmd, newModelCreateCmd(env), newModelDownloadCmd(env), newModelAliasCmd(env), newModelDeleteCmd(env))
}

func modelCommands() assetCommands[model.Version] {
	return assetCommands[model.Version]{
		kind: model.Kind, plural: "models", example: "mnist", everyOf: "every version of a model",
		archiveLong: `An archived version is left out of model list and of @latest, and still resolves when named by
its version (deployments that use it keep working). Without --version every version is archived.`,
		columns: fileAssetColumns,
		row: func(v model.Version) []string {
			return []string{v.Name, v.Version, v.Type, fmt.Sprint(v.Files), humanBytes(v.Size), v.Source, fmtTime(&v.CreatedAt)}
		},
		show:      showModel,
		showCmdOf: newModelShowCmd,
		versions:  func(c *api.Client) versionClient[model.Version] { return c.Models },
	}
}

type modelCreateFlags struct {
	fileAssetFlags
	stage string
}

func newModelCreateCmd(env *Env) *cobra.Command {
	var f modelCreateFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Register a model version from a local path or a job output",
		Long: `Register a model version, from a model YAML file (-f) or from flags; flags override the file.
--path is a local file or folder, or a job's output:
  azureml://jobs/<job>/outputs/<output>              a named output
  azureml://jobs/<job>/outputs/artifacts/paths/<p>   a path in what the job wrote to ./outputs, ./logs
                                                     or logged through MLflow
  models:/m-<id>                                     an MLflow 3 logged model (job show lists a job's)
Without --version the next integer is taken; registering a version that exists is refused.`,
		Example: `  hangar model create -f model.yml
  hangar model create --name mnist --path ./model --type mlflow_model
  hangar model create -n mnist -p azureml://jobs/plucky_otter_k3x9q2mz/outputs/artifacts/paths/outputs/model`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return env.createModel(cmd.Context(), f) },
	}
	f.add(cmd.Flags(), "model", "model", "local file or folder, or azureml://jobs/<job>/outputs/<output>[/paths/<path>]",
		"custom_model (default), mlflow_model or triton_model")
	cmd.Flags().StringVar(&f.stage, "stage", "", "stage (kept and shown)")
	return cmd
}

var modelAsset = fileAssetKind[model.Spec]{
	kind: model.Kind, noun: "model", parse: spec.ParseModelFile,
	fields: func(sp *model.Spec) assetFields {
		return assetFields{&sp.Name, &sp.Version, &sp.Type, &sp.Description, &sp.Path}
	},
	remote: isRemoteModel, checkType: model.CheckType,
	noName: "which model? give --name (or a file with name:)",
	noPath: "where are the model's files? give --path (a local file or folder, or azureml://jobs/<job>/outputs/<output>)",
}

// isAzureMLRef says whether p is an azureml: reference rather than a local path.
func isAzureMLRef(p string) bool { return strings.HasPrefix(strings.ToLower(p), "azureml:") }

// isRemoteModel says whether a model's path names files in the workspace (a job's output, a
// logged model's models:/m-<id>) rather than a local path.
func isRemoteModel(p string) bool { return isAzureMLRef(p) || strings.HasPrefix(p, "models:/") }

// modelSpec builds what to register from the file and the flags, checked as far as the client can.
func modelSpec(f modelCreateFlags, warn io.Writer) (*model.Spec, error) {
	return modelAsset.spec(f.fileAssetFlags, warn, func(sp *model.Spec) []flagOverride {
		return []flagOverride{{&sp.Stage, f.stage}}
	})
}

func (e *Env) createModel(ctx context.Context, f modelCreateFlags) error {
	sp, err := modelSpec(f, e.Stderr)
	if err != nil {
		return err
	}
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	req := api.CreateModelRequest{Spec: *sp}
	if !isRemoteModel(sp.Path) {
		st, err := os.Stat(sp.Path)
		if err != nil {
			return fmt.Errorf("model %s: path: %w", sp.Name, err)
		}
		if req.Manifest, err = e.uploadAssetFiles(ctx, c, "model "+sp.Name, sp.Path, !st.IsDir()); err != nil {
			return err
		}
	}
	v, err := c.Models.Create(ctx, req)
	if err != nil {
		if f.file != "" {
			return fmt.Errorf("%s: %w", f.file, err)
		}
		return err
	}
	return e.printData(v, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "Created model %s version %s: %d files (%s) (use it as %s)\n",
			v.Name, v.Version, v.Files, humanBytes(v.Size), v.ID())
		return err
	})
}

func showModel(w io.Writer, v *model.Version) error {
	if err := kv(w, [][2]string{{"Name", v.Name}, {"Version", v.Version}, {"Type", v.Type},
		{"Files", fmt.Sprintf("%d (%s)", v.Files, humanBytes(v.Size))}, {"Source", v.Source},
		{"Description", v.Description}, {"Stage", v.Stage}, {"MLflow stage", v.RegistryStage()},
		{"Aliases", strings.Join(v.Aliases, ", ")}, {"Archived", assetArchivedText(v.Archived)},
		{"Created", fmtTime(&v.CreatedAt)}, {"Use as", v.ID()}}); err != nil {
		return err
	}
	section(w, "Tags", fmtStrings(v.Tags, ": "))
	section(w, "Properties", fmtStrings(v.Properties, ": "))
	return nil
}

func newModelDownloadCmd(env *Env) *cobra.Command {
	m := assetTarget{kind: model.Kind}
	var dir string
	cmd := &cobra.Command{
		Use:   "download NAME[:VERSION|@latest]",
		Short: "Download a model version's files",
		Long: `Download a model version's files as they were registered into DIR/<name>/ (a folder model's
contents, or a file model's one file). Every file is checked against its hash.`,
		Example: `  hangar model download --name mnist --version 2 --download-path ./models
  hangar model download mnist@latest`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, version, err := m.resolve()
			if err != nil {
				return err
			}
			return env.downloadModel(cmd.Context(), name, version, dir)
		},
	}
	m.flags(cmd)
	cmd.Flags().StringVarP(&dir, "download-path", "p", ".", "folder to download into")
	return cmd
}

func (e *Env) downloadModel(ctx context.Context, name, version, dir string) error {
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	v, err := c.Models.Get(ctx, name, version)
	if err != nil {
		return err
	}
	// The name becomes a folder: never trust a server's answer to stay inside dir.
	if err := model.CheckName(v.Name); err != nil {
		return fmt.Errorf("the workspace answered a bad model name: %w", err)
	}
	src := transfer.ClientSource{C: c}
	m, err := transfer.FetchManifest(ctx, src, v.Manifest)
	if err != nil {
		return err
	}
	dest := filepath.Join(dir, v.Name)
	m = e.skipEscapingLinks(m, dest)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	b := e.newBar(ctx, "download "+v.Name, m.TotalSize())
	err = snapshot.Materialize(ctx, m, countingSource{src: src, bar: b}, dest, snapshot.MaterializeOptions{})
	b.done()
	if err != nil {
		return fmt.Errorf("download model %s version %s into %s: %w", v.Name, v.Version, dest, err)
	}
	fmt.Fprintf(e.Stderr, "Downloaded model %s version %s: %d files (%s) to %s\n", v.Name, v.Version, len(m.Files()), humanBytes(m.TotalSize()), dest)
	return nil
}
