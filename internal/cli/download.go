package cli

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/transfer"
)

type downloadFlags struct {
	name, path, output string
	all                bool
}

func newJobDownloadCmd(env *Env) *cobra.Command {
	var f downloadFlags
	cmd := &cobra.Command{
		Use:   "download NAME",
		Short: "Download a job's artifacts and named outputs",
		Long: `Download a finished job's outputs. The layout follows az ml job download:
  DIR/<job>/artifacts/outputs/...             files the command wrote to ./outputs
  DIR/<job>/artifacts/logs/...                files written to ./logs
  DIR/<job>/artifacts/user_logs/std_log.txt   the command's stdout and stderr
  DIR/<job>/named-outputs/<output>/...        each named output
A distributed run adds user_logs/std_log_process_<rank>.txt per process (by global rank); a
multi-node run also has every other node's merged log as user_logs/std_log_node_<n>.txt and its
system logs under system_logs/node_<n>/. The nodes' outputs/, logs/ and named outputs are merged:
where two nodes wrote the same path differently, node 0's file is kept (job show warns).
Files logged through MLflow (mlflow.log_artifact) are downloaded beside them under
DIR/<job>/artifacts/, also for a run that is not a job; where the job's own file has the same
path, the job's is kept, and none is ever written to user_logs/ or system_logs/ (Hangar's own
logs): those are left out with a warning.
Without --all or --output-name, only the artifacts are downloaded.`,
		Example: `  hangar job download plucky_otter_k3x9q2mz --all --download-path ./out
  hangar job download -n plucky_otter_k3x9q2mz --output-name model`,
	}
	name := addNameArg(cmd, "job", jobNames, env)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		f.name = name.name
		return env.download(cmd.Context(), f)
	}
	cmd.Flags().StringVarP(&f.path, "download-path", "p", ".", "folder to download into")
	cmd.Flags().BoolVar(&f.all, "all", false, "download the artifacts and every named output")
	cmd.Flags().StringVar(&f.output, "output-name", "", "download one named output (\"default\" = the artifacts)")
	return cmd
}

func (e *Env) download(ctx context.Context, f downloadFlags) error {
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	d, err := c.Jobs.Get(ctx, f.name)
	if err != nil {
		return err
	}
	arts, err := c.Jobs.Artifacts(ctx, f.name)
	if err != nil {
		return err
	}
	wantArtifacts := f.output == "" || f.output == "default"
	// A pipeline has no artifacts of its own, only the named outputs its steps produced.
	named := len(arts.NamedOutputs) > 0 && (f.all || !wantArtifacts)
	if arts.Artifacts == "" && !(wantArtifacts && len(arts.Uploaded)+len(arts.LoggedModels) > 0) && !named {
		return fmt.Errorf("job %s has no outputs yet (status %s)", f.name, d.Status)
	}
	type item struct{ hash, dest string }
	base := filepath.Join(f.path, f.name)
	var items []item
	switch {
	case f.output != "" && f.output != "default":
		h, ok := arts.NamedOutputs[f.output]
		if at := storeOutput(d, f.output); !ok && at != "" {
			return fmt.Errorf("job %s wrote output %s to an object store, not to the workspace: %s (read it with the store's own tools)", f.name, f.output, at)
		}
		if !ok {
			return fmt.Errorf("job %s has no output %q (outputs: %v)", f.name, f.output, outputNames(arts))
		}
		items = append(items, item{h, filepath.Join(base, "named-outputs", f.output)})
	case arts.Artifacts == "":
		// A run that is not a job (or not finished) with files logged through MLflow only, or a
		// pipeline's outputs.
		if f.all {
			for _, n := range outputNames(arts) {
				items = append(items, item{arts.NamedOutputs[n], filepath.Join(base, "named-outputs", n)})
			}
		}
	default:
		items = append(items, item{arts.Artifacts, filepath.Join(base, "artifacts")})
		if f.all {
			for _, n := range outputNames(arts) {
				items = append(items, item{arts.NamedOutputs[n], filepath.Join(base, "named-outputs", n)})
			}
		}
	}
	src := transfer.ClientSource{C: c}
	if wantArtifacts {
		// Written before the job's own artifacts, which are then laid over them: a file logged
		// through MLflow never takes the place of one of the job's (the server withholds those).
		if err := e.downloadUploaded(ctx, src, arts, filepath.Join(base, "artifacts")); err != nil {
			return err
		}
		if err := e.downloadLoggedModels(ctx, src, arts.LoggedModels, filepath.Join(base, "artifacts", "models")); err != nil {
			return err
		}
	}
	for _, it := range items {
		m, err := transfer.FetchManifest(ctx, src, it.hash)
		if err != nil {
			return err
		}
		m = e.skipEscapingLinks(m, it.dest)
		if err := os.MkdirAll(it.dest, 0o755); err != nil {
			return err
		}
		b := e.newBar(ctx, "download "+filepath.Base(it.dest), m.TotalSize())
		err = snapshot.Materialize(ctx, m, countingSource{src: src, bar: b}, it.dest, snapshot.MaterializeOptions{})
		b.done()
		if err != nil {
			return fmt.Errorf("download into %s: %w", it.dest, err)
		}
		fmt.Fprintf(e.Stderr, "Downloaded %d files (%s) to %s\n", len(m.Files()), humanBytes(m.TotalSize()), it.dest)
	}
	return nil
}

// downloadUploaded writes the files logged through MLflow beside the job's own artifacts, and
// says which the server withheld (where the job's own files are, or in user_logs/ and
// system_logs/, which hold only the logs Hangar collects). They go through the same checked
// materialization as a manifest (paths that would leave dest, or land below a file, are
// refused before anything is written).
func (e *Env) downloadUploaded(ctx context.Context, src transfer.ClientSource, arts *api.ArtifactsResponse, dest string) error {
	if n := len(arts.Withheld); n > 0 {
		fmt.Fprintf(e.Stderr, "warning: %d file(s) logged through MLflow not downloaded: the job's own files are at their paths, or they lie in %s/, which hold only the logs Hangar collects: %s\n",
			n, strings.Join(api.CollectedLogDirs, "/ or "), strings.Join(arts.Withheld, ", "))
	}
	up := arts.Uploaded
	if len(up) == 0 {
		return nil
	}
	m := uploadedManifest(up)
	b := e.newBar(ctx, "download mlflow artifacts", m.TotalSize())
	err := snapshot.Materialize(ctx, m, countingSource{src: src, bar: b}, dest, snapshot.MaterializeOptions{})
	b.done()
	if err != nil {
		return fmt.Errorf("download MLflow artifacts into %s: %w", dest, err)
	}
	fmt.Fprintf(e.Stderr, "Downloaded %d files logged through MLflow (%s) to %s\n", len(up), humanBytes(m.TotalSize()), dest)
	return nil
}

// downloadLoggedModels writes each of the run's MLflow 3 logged models into dest/<model_id>/,
// through the same checked materialization as the uploaded files.
func (e *Env) downloadLoggedModels(ctx context.Context, src transfer.ClientSource, ms []api.LoggedModel, dest string) error {
	for _, lm := range ms {
		if len(lm.Files) == 0 {
			continue
		}
		if !validModelID(lm.ID) {
			return fmt.Errorf("logged model id %q: not a folder name", lm.ID)
		}
		dir := filepath.Join(dest, lm.ID)
		m := uploadedManifest(lm.Files)
		b := e.newBar(ctx, "download model "+lm.Name, m.TotalSize())
		err := snapshot.Materialize(ctx, m, countingSource{src: src, bar: b}, dir, snapshot.MaterializeOptions{})
		b.done()
		if err != nil {
			return fmt.Errorf("download logged model %s into %s: %w", lm.ID, dir, err)
		}
		fmt.Fprintf(e.Stderr, "Downloaded logged model %s (%s, %d files, %s) to %s\n", lm.ID, lm.Name, len(lm.Files), humanBytes(m.TotalSize()), dir)
	}
	return nil
}

// validModelID says whether id is a logged model's id as the server makes them (m- and hex
// digits): it names a folder, so it is checked, not trusted.
func validModelID(id string) bool {
	if !strings.HasPrefix(id, "m-") || len(id) < 3 || len(id) > 66 {
		return false
	}
	for _, c := range id[2:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// uploadedManifest is the tree of the uploaded files, with their parent directories.
func uploadedManifest(up []api.UploadedArtifact) *snapshot.Manifest {
	m := &snapshot.Manifest{}
	dirs := map[string]bool{}
	for _, a := range up {
		for d := path.Dir(a.Path); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			m.Entries = append(m.Entries, snapshot.Entry{Path: d, Type: snapshot.TypeDir, Mode: 0o755})
		}
		m.Entries = append(m.Entries, snapshot.Entry{Path: a.Path, Type: snapshot.TypeFile, Hash: a.Hash, Size: a.Size, Mode: 0o644})
	}
	return m
}

func outputNames(a *api.ArtifactsResponse) []string {
	var names []string
	for n := range a.NamedOutputs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
