package supervisor

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/envs"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/launch"
	"github.com/hangar-ml/hangar/internal/runbox"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/transfer"
)

// workspace is a run's materialized working directory and what the command needs.
type workspace struct {
	dir          string            // working directory (the code snapshot)
	namedOutputs map[string]string // output name → local path given to the command
	outputDirs   map[string]string // output name → directory collected at the end
	metricsFile  string
	shell        string
	command      string
	vars         []string // the command's environment variables
	pathPrefix   []string // folders put first on PATH (a managed environment, an interpreter shim)
	env          *envs.Env
	// plan is this node's processes (ranks of a distributed run, or the one process).
	plan launch.Plan
	// container is set when the command runs in an image; containerVars are its variables.
	container     *container
	containerVars map[string]string
	// box is where the command's processes start, and how they all end (see runbox).
	box *runbox.Box
	// servePort is the port a replica's command serves on (0: not a replica).
	servePort int
	// imageServe is set for a replica whose image serves by its own entrypoint.
	imageServe *imageServe
	// sidecar is set when that image is the pod's main container beside this supervisor
	// (sidecar.go): there is no command to run.
	sidecar bool
	// userVars are HOME, USER and LOGNAME of the run user, when the box has one (box.go).
	userVars []string
}

// prepare materializes the snapshot, inputs and output folders, makes the environment ready
// (its build output goes to the run's log) and binds the command.
func (s *Supervisor) prepare(ctx context.Context, p *pipeline) (*workspace, error) {
	sp := s.spec.Spec
	w := &workspace{
		dir:          filepath.Join(s.cfg.Dir, WorkDirName),
		namedOutputs: map[string]string{},
		outputDirs:   map[string]string{},
		metricsFile:  filepath.Join(s.cfg.Dir, "hangar", MetricsFile),
	}
	for _, d := range []string{w.dir, filepath.Join(w.dir, "outputs"), filepath.Join(w.dir, "logs"),
		filepath.Join(s.cfg.Dir, UserLogsDir), filepath.Join(s.cfg.Dir, "hangar")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return w, err
		}
	}
	if err := s.loadSecrets(ctx, p); err != nil { // secretenv.go: first, so the log redacts from the start
		return w, err
	}
	if err := s.loadStoreCredentials(ctx, p); err != nil { // objectdata.go: redacted from then on too
		return w, err
	}
	src := s.source()
	if sp.CodeSnapshot != "" {
		m, err := transfer.FetchManifest(ctx, src, sp.CodeSnapshot)
		if err != nil {
			return w, fmt.Errorf("code snapshot: %w", err)
		}
		if err := snapshot.Materialize(ctx, m, src, w.dir, snapshot.MaterializeOptions{}); err != nil {
			return w, fmt.Errorf("code snapshot: %w", err)
		}
		// The snapshot may hold outputs/ or logs/ files; the folders must exist either way.
		_ = os.MkdirAll(filepath.Join(w.dir, "outputs"), 0o755)
		_ = os.MkdirAll(filepath.Join(w.dir, "logs"), 0o755)
	}
	values := map[string]string{}
	extraEnv := map[string]string{}
	if err := s.inputs.prepare(ctx, src, values, extraEnv); err != nil {
		return w, err
	}
	if err := s.outputs.prepare(w, values, extraEnv); err != nil {
		return w, err
	}
	if s.importing() { // dataimport.go: the supervisor reads the source itself; no command runs
		return w, nil
	}
	if err := s.serving.prepare(w, values, extraEnv); err != nil {
		return w, err
	}
	if err := s.checkpoints.prepare(ctx, src, p.capt, extraEnv); err != nil {
		return w, err
	}
	if err := s.prepareServerCA(extraEnv); err != nil { // servertls.go
		return w, err
	}
	if w.sidecar { // the image is started by Kubernetes; there is nothing to bind or build
		return w, nil
	}
	if err := s.prepareParallel(values, extraEnv); err != nil {
		return w, err
	}
	cmd, err := binding.Bind(sp.Command, values)
	if err != nil {
		return w, fmt.Errorf("bind command: %w", err)
	}
	w.command = cmd
	s.mu.Lock()
	s.boundCommand = cmd
	s.mu.Unlock()
	shell, err := exec.LookPath("bash")
	if err != nil {
		return w, fmt.Errorf("bash not found on this node: %w", err)
	}
	w.shell = shell
	if err := s.openBox(ctx, w); err != nil { // box.go: environment builds run in it too
		return w, err
	}
	if err := s.environment.setup(ctx, w, extraEnv, p.capt); err != nil {
		return w, err
	}
	if err := s.giveToRunUser(w); err != nil {
		return w, err
	}
	if err := s.serving.checkImage(w, p.capt); err != nil {
		return w, err
	}
	if w.plan, err = s.ranks.plan(); err != nil {
		return w, err
	}
	vars := s.environment.vars(w, extraEnv)
	if w.container != nil {
		w.containerVars = s.environment.containerVars(vars)
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		w.vars = append(w.vars, k+"="+vars[k])
	}
	return w, nil
}

// source reads blobs from the node cache, then the server's store on this machine, then the server.
func (s *Supervisor) source() snapshot.Source {
	return &cachedSource{cache: s.cache, local: s.local, remote: transfer.ClientSource{C: s.conn.c}, s: s}
}

type cachedSource struct {
	cache, local *blob.Store
	remote       snapshot.Source
	s            *Supervisor
}

func (c *cachedSource) Open(ctx context.Context, hash string) (io.ReadCloser, error) {
	if c.cache.Has(hash) {
		return c.cache.Open(hash)
	}
	if c.local != nil && c.local.Has(hash) {
		return c.local.Open(hash)
	}
	err := c.s.conn.retry(ctx, "fetch blob", func(ctx context.Context) error {
		r, err := c.remote.Open(ctx, hash)
		if err != nil {
			return err
		}
		defer r.Close()
		_, _, err = c.cache.Put(r, hash)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fetch blob %s: %w", hash, err)
	}
	return c.cache.Open(hash)
}

// prepare materializes data inputs under <run>/inputs/<name> (a deployment's model below
// AZUREML_MODEL_DIR: modeldir.go) and records every input's value.
func (s *inputFetcher) prepare(ctx context.Context, src snapshot.Source, values, env map[string]string) error {
	names := slices.Sorted(maps.Keys(s.spec.Spec.Inputs))
	for _, name := range names {
		in := s.spec.Spec.Inputs[name]
		if in.Optional && !in.IsLiteral() && in.Path == "" && in.Manifest == "" {
			continue // an optional data input left out
		}
		v, err := s.prepareOne(ctx, src, name, in)
		if err != nil {
			return fmt.Errorf("input %s: %w", name, err)
		}
		if v == "" && in.Optional && in.IsLiteral() {
			continue // absent optional input: its $[[ ]] segments are dropped
		}
		values["inputs."+name] = v
		env["AZURE_ML_INPUT_"+name] = v
	}
	return nil
}

func (s *inputFetcher) prepareOne(ctx context.Context, src snapshot.Source, name string, in job.Input) (string, error) {
	if in.IsLiteral() {
		return in.Value, nil
	}
	if in.Store != nil && in.Mode == "direct" {
		return in.Store.URI(), nil
	}
	if in.Mode == "direct" && in.Manifest == "" {
		return in.Path, nil
	}
	dest, err := s.dir(name) // modeldir.go: a deployment's model where Azure lays it out
	if err != nil {
		return "", err
	}
	if in.Store != nil {
		return s.fetchStore(ctx, name, in, dest) // objectdata.go
	}
	if in.Manifest != "" {
		m, err := transfer.FetchManifest(ctx, src, in.Manifest)
		if err != nil {
			return "", err
		}
		opts := snapshot.MaterializeOptions{ReadOnly: in.Mode == "ro_mount" || in.Mode == ""}
		if err := snapshot.Materialize(ctx, m, src, dest, opts); err != nil {
			return "", err
		}
		if in.Type == job.URIFile {
			files := m.Files()
			if len(files) != 1 {
				return "", fmt.Errorf("uri_file input holds %d files, expected 1", len(files))
			}
			return filepath.Join(dest, filepath.FromSlash(files[0].Path)), nil
		}
		return dest, nil
	}
	if strings.HasPrefix(in.Path, "http://") || strings.HasPrefix(in.Path, "https://") {
		return s.download(ctx, in, dest)
	}
	return "", fmt.Errorf("path %s cannot be materialized on this node", in.Path)
}

// download fetches an http(s) uri_file input.
func (s *inputFetcher) download(ctx context.Context, in job.Input, dest string) (string, error) {
	if in.Type != job.URIFile {
		return "", fmt.Errorf("%s over http(s) is not supported; use uri_file or mode: direct", in.Type)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.Path, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", in.Path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download %s: %s", in.Path, resp.Status)
	}
	base := path.Base(resp.Request.URL.Path)
	if base == "/" || base == "." || base == "" {
		base = "data"
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dest, base)
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return "", fmt.Errorf("download %s: %w", in.Path, err)
	}
	return out, f.Close()
}

// prepare creates a folder per named output; a uri_file output is a file inside it.
func (s *outputCollector) prepare(w *workspace, values, env map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(s.spec.Spec.Outputs)) {
		out := s.spec.Spec.Outputs[name]
		dir := filepath.Join(s.cfg.Dir, "named-outputs", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("output %s: %w", name, err)
		}
		p := dir
		switch {
		case out.Type == job.URIFile && out.Store != nil: // the object's name (objectdata.go)
			p = filepath.Join(dir, path.Base(out.Store.ForRun(s.spec.RunID).Path))
		case out.Type == job.URIFile:
			p = filepath.Join(dir, outputFileName(name, out.Path, s.spec.RunID))
		}
		w.namedOutputs[name], w.outputDirs[name] = p, dir
		values["outputs."+name] = p
		env["AZURE_ML_OUTPUT_"+name] = p
	}
	return nil
}

// outputFileName is the name of a uri_file output's file: the last part of its datastore path
// (azureml://datastores/<datastore>/paths/<folder>/hello_world.txt is hello_world.txt, as Azure
// names it; ${{name}} is the run's name), else the output's name.
func outputFileName(name, p, run string) string {
	p = strings.NewReplacer("${{name}}", run, "${{ name }}", run, "${{output_name}}", name, "${{ output_name }}", name).Replace(p)
	_, rest, ok := strings.Cut(p, "/paths/")
	base := path.Base(strings.TrimRight(rest, "/"))
	if !ok || rest == "" || base == "." || base == ".." || base == "/" || strings.Contains(base, "${{") {
		return name
	}
	return base
}

// vars is the host's variables without Hangar's own credentials, then Hangar's, then the job's.
//
// MLflow's variables point a script's MLflow client at this run, as Azure ML does: the tracking
// URI is the address this supervisor reaches the server at (an SSH node's reverse tunnel, a
// cluster agent's server address), the token is the run token (the same credential as
// HANGAR_RUN_TOKEN, handed the same way: in the command's environment only, and it reaches this
// run alone). A job's environment_variables win over them: a job logs to another MLflow server
// by setting MLFLOW_TRACKING_URI, and then gets no run token in MLFLOW_TRACKING_TOKEN (only the
// one it sets), so the workspace's credential never travels there.
func (s *runEnvironment) vars(w *workspace, extra map[string]string) map[string]string {
	vars := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "HANGAR_") { // the node's own (its home, tokens, settings): none is the run's
			continue
		}
		vars[k] = v
	}
	for _, kv := range w.userVars {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	vars["PYTHONUNBUFFERED"] = "1"
	sp := s.spec
	for k, v := range map[string]string{
		"HANGAR_RUN_ID":                         sp.RunID,
		"HANGAR_WORKSPACE_URL":                  sp.WorkspaceURL,
		"HANGAR_RUN_TOKEN":                      s.cfg.Token,
		"HANGAR_METRICS_FILE":                   w.metricsFile,
		"HANGAR_OUTPUTS_DIR":                    filepath.Join(w.dir, "outputs"),
		"AZUREML_RUN_ID":                        sp.RunID,
		"MLFLOW_RUN_ID":                         sp.RunID,
		"AZUREML_ARM_PROJECT_NAME":              sp.Spec.ExperimentName,
		"MLFLOW_EXPERIMENT_NAME":                sp.Spec.ExperimentName,
		"AZUREML_CR_EXECUTION_WORKING_DIR_PATH": w.dir,
		"MLFLOW_TRACKING_URI":                   s.trackingURI(),
		"MLFLOW_TRACKING_TOKEN":                 s.cfg.Token,
	} {
		vars[k] = v
	}
	if sp.Spec.ExperimentName == "" {
		// An empty name is no experiment: the run's own (MLFLOW_RUN_ID) is the one it is in.
		delete(vars, "MLFLOW_EXPERIMENT_NAME")
	}
	for k, v := range extra {
		vars[k] = v
	}
	if _, own := sp.Spec.EnvironmentVariables["MLFLOW_TRACKING_URI"]; own {
		// Another tracking server: the run token is for this workspace only, never sent there.
		delete(vars, "MLFLOW_TRACKING_TOKEN")
		delete(vars, "MLFLOW_TRACKING_SERVER_CERT_PATH") // this server's certificate, not that one's
	}
	for k, v := range sp.Spec.EnvironmentVariables {
		vars[k] = s.envValue(k, v) // secretenv.go: ${{secrets.x}} bound
	}
	if len(w.pathPrefix) > 0 {
		vars["PATH"] = strings.Join(append(append([]string(nil), w.pathPrefix...), vars["PATH"]), string(os.PathListSeparator))
	}
	return vars
}

// trackingURI is where the run's MLflow client reaches the workspace: the supervisor's relay when
// it has several servers (relay.go), else the server it uses.
func (s *Supervisor) trackingURI() string {
	if s.relayURL != "" {
		return s.relayURL
	}
	return s.conn.c.BaseURL()
}
