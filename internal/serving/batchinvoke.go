package serving

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// BatchOverrides are what one invoke changes of its deployment, for that scoring job only (the
// stored deployment stays as it is): az ml batch-endpoint invoke's --mini-batch-size,
// --instance-count, --output-path, --job-name, --experiment-name and the fields its --set
// names. A nil or empty field keeps the deployment's value.
type BatchOverrides struct {
	MiniBatchSize  *int   `json:"mini_batch_size,omitempty"`
	InstanceCount  *int   `json:"instance_count,omitempty"`
	OutputFileName string `json:"output_file_name,omitempty"`
	ErrorThreshold *int   `json:"error_threshold,omitempty"`
	MaxRetries     *int   `json:"max_retries,omitempty"`
	Timeout        *int   `json:"timeout,omitempty"` // seconds per mini-batch
	LoggingLevel   string `json:"logging_level,omitempty"`
	// OutputPath is where the output score is written, azureml://datastores/<ds>/paths/<p>
	// (the caller checks the datastore).
	OutputPath     string `json:"output_path,omitempty"`
	JobName        string `json:"job_name,omitempty"`
	ExperimentName string `json:"experiment_name,omitempty"`
}

// BatchInvocation is one invoke beyond its deployment's name: inputs and outputs as Azure's
// invocation file (--file) names them, and the overrides.
type BatchInvocation struct {
	Inputs  map[string]job.Input  `json:"inputs,omitempty"`
	Outputs map[string]job.Output `json:"outputs,omitempty"`
	BatchOverrides
}

// batchFlags are the invoke flags that set an override, by the field name errors use.
var batchFlags = map[string]string{
	"mini_batch_size": "--mini-batch-size", "compute.instance_count": "--instance-count",
	"output_path": "--output-path", "job_name": "--job-name", "experiment_name": "--experiment-name",
}

// batchField is a field as errors name it: az's key, with the invoke flag that sets it.
func batchField(key string) string {
	if f := batchFlags[key]; f != "" {
		return key + " (" + f + ")"
	}
	return key
}

// BatchInvokeSpec is the job one invoke of deployment d runs: BatchJobSpec over the input scored
// (input, or the one data input of inv.Inputs) with inv's overrides applied to a copy of d.
// Errors name the field (and the flag that sets it) and what was expected.
func BatchInvokeSpec(d BatchDeployment, modelManifest string, input job.Input, inv BatchInvocation) (job.Spec, error) {
	in, err := inv.scoredInput(input)
	if err != nil {
		return job.Spec{}, err
	}
	out, err := inv.scoreOutput()
	if err != nil {
		return job.Spec{}, err
	}
	if err := inv.apply(&d); err != nil {
		return job.Spec{}, err
	}
	sp := BatchJobSpec(d, modelManifest, in)
	sp.Outputs[BatchOutput] = out
	if inv.JobName != "" {
		sp.Name = inv.JobName
	}
	if inv.ExperimentName != "" {
		sp.ExperimentName = inv.ExperimentName
	}
	return sp, nil
}

// OutputPathField is where the output score goes ("": the job's own place) and the field that
// said so, for errors about the datastore.
func (inv BatchInvocation) OutputPathField() (path, field string) {
	if inv.OutputPath != "" {
		return inv.OutputPath, batchField("output_path")
	}
	return inv.Outputs[BatchOutput].Path, "outputs." + BatchOutput + ".path"
}

// scoredInput is the input a model deployment scores: the one given alone (--input), or the one
// data input of the invocation file's inputs, whatever its name (a uri_folder unless typed).
func (inv BatchInvocation) scoredInput(input job.Input) (job.Input, error) {
	if len(inv.Inputs) == 0 {
		return typed(input), checkScoredInput("input", input)
	}
	if input.Manifest != "" || input.Path != "" {
		return job.Input{}, fmt.Errorf("input: give --input or the file's inputs, not both")
	}
	names := slices.Sorted(maps.Keys(inv.Inputs))
	for _, n := range names {
		if in := inv.Inputs[n]; in.IsLiteral() {
			return job.Input{}, fmt.Errorf("inputs.%s: a model deployment scores one uri_folder or uri_file input and takes no %s value (literal inputs are a pipeline deployment's)", n, in.Type)
		}
	}
	if len(names) > 1 {
		return job.Input{}, fmt.Errorf("inputs: a model deployment scores one input, got %d (%s)", len(names), strings.Join(names, ", "))
	}
	return typed(inv.Inputs[names[0]]), checkScoredInput("inputs."+names[0], inv.Inputs[names[0]])
}

// typed is in as a uri_folder when it names data and no type.
func typed(in job.Input) job.Input {
	if in.Type == "" && (in.Manifest != "" || in.Path != "") {
		in.Type = job.URIFolder
	}
	return in
}

// checkScoredInput refuses an input a batch job cannot split into mini-batches of files.
func checkScoredInput(field string, in job.Input) error {
	switch {
	case in.Type != "" && in.Type != job.URIFolder && in.Type != job.URIFile:
		return fmt.Errorf("%s: type %q; expected uri_folder or uri_file", field, in.Type)
	case in.Manifest == "" && in.Path == "":
		return fmt.Errorf("%s: required (a folder or file, uploaded, or an azureml:// path)", field)
	case in.Manifest == "" && strings.HasPrefix(in.Path, "/"):
		return fmt.Errorf("%s: %s is a path on the client; upload it (hangar batch-endpoint invoke --input PATH)", field, in.Path)
	}
	return nil
}

// scoreOutput is the output score: a uri_folder, at OutputPath or the file's outputs.score.path
// when given (the flag wins). A model deployment has no other output.
func (inv BatchInvocation) scoreOutput() (job.Output, error) {
	for _, n := range slices.Sorted(maps.Keys(inv.Outputs)) {
		if n != BatchOutput {
			return job.Output{}, fmt.Errorf("outputs.%s: a model deployment has one output, %s", n, BatchOutput)
		}
	}
	o := inv.Outputs[BatchOutput]
	if o.Type != "" && o.Type != job.URIFolder {
		return job.Output{}, fmt.Errorf("outputs.%s.type: %q; the output of a model deployment is a uri_folder", BatchOutput, o.Type)
	}
	o.Type, o.Name, o.Version = job.URIFolder, "", ""
	if inv.OutputPath != "" {
		o.Path = inv.OutputPath
	}
	return o, nil
}

// apply checks each override and sets it on d's copy.
func (o BatchOverrides) apply(d *BatchDeployment) error {
	s := &d.Settings
	for _, c := range []struct {
		key string
		v   *int
		min int
		set func(int)
	}{
		{"mini_batch_size", o.MiniBatchSize, 1, func(v int) { s.MiniBatchSize, s.MiniBatchBytes = v, 0 }},
		{"compute.instance_count", o.InstanceCount, 1, func(v int) { d.InstanceCount = v }},
		{"error_threshold", o.ErrorThreshold, -1, func(v int) { s.ErrorThreshold = v }},
		{"retry_settings.max_retries", o.MaxRetries, 0, func(v int) { s.MaxRetries = v }},
		{"retry_settings.timeout", o.Timeout, 1, func(v int) { s.Timeout = v }},
	} {
		if c.v == nil {
			continue
		}
		if *c.v < c.min {
			return fmt.Errorf("%s: expected an integer of at least %d, got %d", batchField(c.key), c.min, *c.v)
		}
		c.set(*c.v)
	}
	if err := o.applyNames(d); err != nil {
		return err
	}
	return checkJobName(o.JobName)
}

// applyNames sets the output file's name and the logging level.
func (o BatchOverrides) applyNames(d *BatchDeployment) error {
	if f := o.OutputFileName; f != "" {
		if err := checkFileName(f); err != nil {
			return fmt.Errorf("output_file_name: %w", err)
		}
		if d.Settings.OutputAction == OutputSummaryOnly {
			return fmt.Errorf("output_file_name: deployment %s writes no row file (its output_action is %s)", d.Name, OutputSummaryOnly)
		}
		d.Settings.OutputFileName = f
	}
	if l := o.LoggingLevel; l != "" {
		if !slices.Contains(batchLoggingLevels, strings.ToLower(l)) {
			return fmt.Errorf("logging_level: expected one of %s, got %q", strings.Join(batchLoggingLevels, ", "), l)
		}
		d.Settings.LoggingLevel = strings.ToLower(l)
	}
	return nil
}

// batchLoggingLevels are a batch deployment's settings.logging_level values.
var batchLoggingLevels = []string{"debug", "info", "warning"}

func checkFileName(f string) error {
	if f == "." || f == ".." || strings.ContainsAny(f, "/\\\x00") {
		return fmt.Errorf("%q: expected a file name, without folders", f)
	}
	return nil
}

// checkJobName refuses a job name no run could take (a job's name rule).
func checkJobName(n string) error {
	ok := len(n) <= 255
	for i, r := range n {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		ok = ok && (alnum || i > 0 && (r == '-' || r == '_'))
	}
	if !ok {
		return fmt.Errorf("%s: %q must start with a letter or digit and hold only letters, digits, '-' and '_'", batchField("job_name"), n)
	}
	return nil
}
