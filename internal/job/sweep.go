package job

import "github.com/hangar-ml/hangar/internal/sweep"

// SweepRun is what makes a run a `type: sweep` job's parent (Azure's sweepJob): the rest of
// the Spec is the trial template, a command job whose command may use ${{search_space.<name>}}.
// The parent is never handed to a backend; the controller's sweep loop creates its trials as
// ordinary command runs, each with the search space's values as literal inputs.
type SweepRun struct {
	Config sweep.Config `json:"config"`
	// Trial is the component file the trial came from (`trial: ./train.yml`), as written; ""
	// for an inline trial.
	Trial string `json:"trial,omitempty"`
	// ParamInputs lists the search-space names that bind a trial's inputs of the same name (a
	// component trial's); the others bind ${{search_space.<name>}} in the command.
	ParamInputs []string `json:"param_inputs,omitempty"`
}
