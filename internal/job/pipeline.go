package job

// PipelineRun is what makes a run a `type: pipeline` job's parent (Azure's pipelineJob). The
// parent is never handed to a backend: the controller's pipeline loop creates each step as a
// child run of its own (a command, parallel or sweep job) once the steps it reads from have
// completed. The spec decoder fills it: components resolved, each step's inputs bound in the
// parent's context (literals and the pipeline's own inputs copied in), nested pipeline
// components flattened into their steps.
type PipelineRun struct {
	Settings PipelineSettings `json:"settings"`
	// Steps by name. A nested pipeline's steps are named "<outer>.<inner>" (Group says which
	// pipeline step they came from), so every name is unique and the graph is flat.
	Steps map[string]PipelineStep `json:"steps"`
	// Outputs binds the pipeline's own outputs (${{parent.outputs.y}} in a step) to the step
	// output that produces each.
	Outputs map[string]StepRef `json:"outputs,omitempty"`
	// Component is the pipeline component that defines a pipeline job (`component:` at its top,
	// instead of jobs): a registered one (azureml:<name>@latest) before the workspace resolves it
	// at create, then the version it used (name:version); a file's path once the CLI inlined it.
	Component string `json:"component,omitempty"`
}

// PipelineSettings is a pipeline job's `settings`.
type PipelineSettings struct {
	DefaultCompute        string `json:"default_compute,omitempty"`   // bare target name
	DefaultDatastore      string `json:"default_datastore,omitempty"` // bare datastore name
	ContinueOnStepFailure bool   `json:"continue_on_step_failure"`
	ForceRerun            bool   `json:"force_rerun"`
}

// PipelineStep is one step: Spec is the step as a job of its own (Type "command", "parallel"
// or "sweep"; Compute already defaulted from the settings), with every input that does not
// come from another step already bound. From lists the inputs that read another step's
// output; they are bound when the step is started.
type PipelineStep struct {
	Spec Spec               `json:"spec"`
	From map[string]StepRef `json:"from,omitempty"`
	// Component names where the step's definition came from: "name:version" for a registered
	// component, the file's path for a component file, "" for an inline step.
	Component string `json:"component,omitempty"`
	// Deterministic is the component's is_deterministic (default true): false turns the step
	// cache off for this step.
	Deterministic bool `json:"deterministic"`
	// Group is the nested pipeline step this step came from ("" for a top-level step).
	Group string `json:"group,omitempty"`
}

// StepRef names one output of one step (${{parent.jobs.<step>.outputs.<output>}}).
type StepRef struct {
	Step   string `json:"step"`
	Output string `json:"output"`
}
