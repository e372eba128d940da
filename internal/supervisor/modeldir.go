package supervisor

import (
	"fmt"
	"path/filepath"
)

// A deployment's model (an online replica's, a batch deployment's job's) is an input like any
// other, materialized by the same code, only in the place Azure lays it out: a folder model's
// files under AZUREML_MODEL_DIR/<folder>, a one-file model's file directly in AZUREML_MODEL_DIR.
// The folder is the materialized input itself, a real directory (read-only, as every input
// without a writable mode), so a scoring script that walks AZUREML_MODEL_DIR with os.walk, which
// follows no link, finds its files; and nothing is copied a second time.

// modelRootDir is AZUREML_MODEL_DIR of a folder model, below the run's hangar/.
const modelRootDir = "azureml-models"

// modelInput is the run's model input and the folder its files sit under below
// AZUREML_MODEL_DIR ("" : directly); name "" when the run has no model.
func (s *inputFetcher) modelInput() (name, folder string) {
	if sv := s.spec.Spec.Serve; sv != nil && sv.ModelInput != "" {
		return sv.ModelInput, sv.ModelFolder
	}
	if p := s.spec.Spec.Parallel; p != nil && p.ModelInput != "" {
		return p.ModelInput, p.ModelFolder
	}
	return "", ""
}

func (s *inputFetcher) modelRoot() string { return filepath.Join(s.cfg.Dir, "hangar", modelRootDir) }

// dir is where the input name is materialized: <run>/inputs/<name>, except a folder model,
// which is materialized as AZUREML_MODEL_DIR/<folder>.
func (s *inputFetcher) dir(name string) (string, error) {
	model, folder := s.modelInput()
	if name != model || folder == "" {
		return filepath.Join(s.cfg.Dir, "inputs", name), nil
	}
	if !folderName(folder) {
		return "", fmt.Errorf("model folder %q is not a folder name", folder)
	}
	return filepath.Join(s.modelRoot(), folder), nil
}

// modelDir is AZUREML_MODEL_DIR for a model materialized at input (inputDir's place): the
// folder above it for a folder model, the input itself for a one-file model.
func (s *inputFetcher) modelDir(input, folder string) (string, error) {
	if input == "" {
		return "", fmt.Errorf("the model input was not materialized")
	}
	if folder == "" {
		return input, nil
	}
	root := s.modelRoot()
	if filepath.Clean(input) != filepath.Join(root, folder) {
		return "", fmt.Errorf("the model was materialized at %s, not at %s", input, filepath.Join(root, folder))
	}
	return root, nil
}

// folderName reports whether f names one folder (no separator, not . or ..).
func folderName(f string) bool {
	return f != "" && f == filepath.Base(f) && f != "." && f != ".."
}
