package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/envs"
	"github.com/hangar-ml/hangar/internal/job"
)

// A no-code MLflow deployment (an online replica, a batch job) whose deployment names no
// environment runs in the environment its model asks for, as Azure builds one from the model's
// conda.yaml: the model's requirements.txt (else conda.yaml's pip list) are read once its files
// are in place, and
//   - when the node's python3 has every library they name (at any version, as a curated
//     environment is mapped to the node's own Python), the run uses it as it is;
//   - otherwise a managed environment is built from them with pip from the node's package index
//     (pip.conf, PIP_INDEX_URL, PIP_FIND_LINKS), cached per node like any conda file's.
// mlflow itself is left out (Hangar's built-in scorer stands in for it); the run's log and
// warnings say which was chosen and why.

// mlmodelFile marks an MLflow model's folder.
const mlmodelFile = "MLmodel"

// mlflowSkipped are requirements the built-in scorer does not need.
var mlflowSkipped = []string{"mlflow", "mlflow-skinny", "mlflow-tracing"}

// scorerNeeds are what the built-in scorer imports besides the model's own libraries (PyPI names).
var scorerNeeds = []string{"numpy", "pandas", "pyyaml"}

var requirementName = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)`)

// isMLflowNoCode says the run is a no-code MLflow deployment's that names no environment.
func isMLflowNoCode(sp job.Spec) bool {
	mlflow := sp.Serve != nil && sp.Serve.MLflow || sp.Parallel != nil && sp.Parallel.MLflow
	return mlflow && sp.Environment.IsEmpty()
}

// modelRequirements are the model's requirement lines and the file they came from ("" : none).
// The model is the folder holding MLmodel: MLFLOW_MODEL_FOLDER under modelDir, modelDir itself, or
// its one subfolder that has it (the scorer's own rule).
func modelRequirements(modelDir, folder string) ([]string, string, error) {
	dir, err := mlflowModelDir(modelDir, folder)
	if err != nil {
		return nil, "", err
	}
	if b, err := os.ReadFile(filepath.Join(dir, "requirements.txt")); err == nil {
		s, err := envs.FromEnvironment(job.Environment{RequirementsText: string(b)})
		return pipOnly(s.Pip), "requirements.txt", err
	}
	b, err := os.ReadFile(filepath.Join(dir, "conda.yaml"))
	if err != nil {
		return nil, "", nil
	}
	s, err := envs.FromEnvironment(job.Environment{CondaSpec: string(b)})
	if err != nil {
		return nil, "", fmt.Errorf("the model's conda.yaml: %w", err)
	}
	return pipOnly(s.Pip), "conda.yaml", nil
}

// pipOnly drops pip's options (-r, --index-url, ...): a model's files name packages.
func pipOnly(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		if !strings.HasPrefix(r, "-") {
			out = append(out, r)
		}
	}
	return out
}

func mlflowModelDir(modelDir, folder string) (string, error) {
	has := func(d string) bool {
		st, err := os.Stat(filepath.Join(d, mlmodelFile))
		return err == nil && st.Mode().IsRegular()
	}
	if folder != "" {
		if d := filepath.Join(modelDir, folder); has(d) {
			return d, nil
		}
		return "", fmt.Errorf("no %s file in %s", mlmodelFile, filepath.Join(modelDir, folder))
	}
	if has(modelDir) {
		return modelDir, nil
	}
	entries, err := os.ReadDir(modelDir)
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range entries {
		if d := filepath.Join(modelDir, e.Name()); e.IsDir() && has(d) {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("no %s file in %s (nor in exactly one folder under it)", mlmodelFile, modelDir)
	}
	return found[0], nil
}

// reqName is a requirement's distribution name, normalized as pip compares them.
func reqName(r string) string {
	m := requirementName.FindStringSubmatch(r)
	if m == nil {
		return ""
	}
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(m[1]))
}

// modelEnvPlan is what a no-code MLflow run's environment will be.
type modelEnvPlan struct {
	build   []string // pip requirements of a managed environment; nil: the node's python3
	message string   // what the run's log and warnings say
}

// planModelEnv chooses from the model's requirements and the versions of them the node's
// python3 has (name → version; a name missing is not installed).
func planModelEnv(file string, reqs []string, python string, have map[string]string) modelEnvPlan {
	var needed, missing, found []string
	for _, r := range reqs {
		n := reqName(r)
		if n == "" || slices.Contains(mlflowSkipped, n) {
			continue
		}
		needed = append(needed, r)
		if v, ok := have[n]; ok {
			found = append(found, n+" "+v)
		} else {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		what := "none of them besides mlflow (Hangar's built-in scorer stands in for it)"
		if len(found) > 0 {
			what = "every library they name: " + strings.Join(found, ", ")
		}
		return modelEnvPlan{message: fmt.Sprintf("the deployment names no environment, so the model's %s is its environment; "+
			"the node's %s has %s, so the run uses it as it is (nothing is installed; a version other than the model's is "+
			"named in the scorer's log)", file, python, what)}
	}
	build := slices.Clone(needed)
	for _, n := range scorerNeeds {
		if !slices.ContainsFunc(build, func(r string) bool { return reqName(r) == n }) {
			build = append(build, n)
		}
	}
	return modelEnvPlan{build: build, message: fmt.Sprintf("the deployment names no environment, so the model's %s is its environment; "+
		"the node's %s lacks %s, so a managed environment is built with pip from the node's package index "+
		"(pip.conf, PIP_INDEX_URL, PIP_FIND_LINKS): %s", file, python, strings.Join(missing, ", "), strings.Join(build, " "))}
}

// probeInstalled says which python3 it is and which of the names it has installed, with their
// versions.
const probeInstalled = `import importlib.metadata as m, json, sys
have = {}
for n in sys.argv[1:]:
    try:
        have[n] = m.version(n)
    except m.PackageNotFoundError:
        pass
print(json.dumps({"python": sys.executable, "have": have}))
`

// probeScript runs probeInstalled with the python3 that the run's PATH finds, as the run's
// command would (in the run's box, as its user: a folder the user may not enter is skipped).
const probeScript = `exec python3 -c "$1" "${@:2}"`

// modelEnvironment makes a no-code MLflow run's environment from its model's requirements
// (see the top of this file). A model whose folder or files cannot be read leaves the node's
// python3 in place: the scorer says what is wrong at its start.
func (s *runEnvironment) modelEnvironment(ctx context.Context, w *workspace, extra map[string]string, log io.Writer) error {
	reqs, file, err := modelRequirements(extra["AZUREML_MODEL_DIR"], s.spec.Spec.EnvironmentVariables["MLFLOW_MODEL_FOLDER"])
	if err != nil || file == "" {
		if err != nil {
			fmt.Fprintf(log, "hangar: environment: the model's requirements were not read (%v); the node's python3 runs it\n", err)
		}
		return nil
	}
	var names []string
	for _, r := range reqs {
		if n := reqName(r); n != "" {
			names = append(names, n)
		}
	}
	var out bytes.Buffer
	var probe struct {
		Python string            `json:"python"`
		Have   map[string]string `json:"have"`
	}
	args := append([]string{"-c", probeScript, "bash", probeInstalled}, names...)
	if err := (runner{w: w}).Run(ctx, &out, envs.BuildEnv(), w.shell, args...); err != nil {
		return fmt.Errorf("environment: the model's %s: list the libraries of the node's python3: %w: %s", file, err, strings.TrimSpace(out.String()))
	}
	text := strings.TrimSpace(out.String()) // the JSON is the last line, after any warning
	if err := json.Unmarshal([]byte(text[strings.LastIndex(text, "\n")+1:]), &probe); err != nil {
		return fmt.Errorf("environment: the model's %s: list the libraries of the node's python3: %w: %s", file, err, strings.TrimSpace(out.String()))
	}
	python := "python3 (" + probe.Python + ")"
	plan := planModelEnv(file, reqs, python, probe.Have)
	fmt.Fprintf(log, "hangar: environment: %s\n", plan.message)
	s.warn(plan.message)
	if plan.build == nil {
		return nil
	}
	return s.managed(ctx, w, envs.Spec{Kind: envs.Managed, Pip: plan.build}, extra, log)
}
