package parallel

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pattern"
)

// Defaults of a parallel job's settings (Azure's parallelJob schema), applied where a spec sent
// straight to the API leaves them zero.
const (
	DefaultMiniBatchSize  = 10
	DefaultTimeoutSeconds = 60
	DefaultLoggingLevel   = "INFO"
)

// Command is the start of a parallel job's command: the driver the supervisor writes.
const Command = `exec python3 "$HANGAR_PARALLEL_DRIVER"`

var (
	loggingLevels = []string{"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}
	// bindingName is what may follow inputs. or outputs. in the command: nothing else reaches it.
	bindingName = pattern.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ToCommand turns a parallel job into the command job that runs it: the driver with the input
// to split, the output rows go to and the entry script's program arguments (bound by the
// supervisor like any command's references). The settings stay in Spec.Parallel, where the
// supervisor finds them. Bad settings (from a client that skipped the file checks) are errors
// naming the field.
func ToCommand(s job.Spec) (job.Spec, error) {
	if s.Type != "parallel" || s.Parallel == nil {
		return job.Spec{}, fmt.Errorf("parallel: set by Hangar for parallel jobs only (type: parallel)")
	}
	if strings.TrimSpace(s.Command) != "" {
		return job.Spec{}, fmt.Errorf("command: a parallel job has no command (its task.entry_script runs)")
	}
	if s.Distribution != nil {
		return job.Spec{}, fmt.Errorf("distribution: a parallel job has none (resources.instance_count and max_concurrency_per_instance spread it)")
	}
	p := *s.Parallel
	applyDefaults(&p)
	if err := check(s, p); err != nil {
		return job.Spec{}, err
	}
	cmd := Command + " --input-data ${{inputs." + p.InputData + "}}"
	if p.AppendRowTo != "" {
		cmd += " --append-row-to ${{outputs." + p.AppendRowTo + "}}"
	}
	cmd += " --"
	if args := strings.TrimSpace(p.ProgramArguments); args != "" {
		cmd += " " + args
	}
	s.Type, s.Command, s.Parallel = "command", cmd, &p
	return s, nil
}

func applyDefaults(p *job.ParallelRun) {
	if p.MiniBatchSize == 0 && p.MiniBatchBytes == 0 {
		p.MiniBatchSize = DefaultMiniBatchSize
	}
	if p.MaxConcurrencyPerInstance == 0 {
		p.MaxConcurrencyPerInstance = 1
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = DefaultTimeoutSeconds
	}
	if p.LoggingLevel == "" {
		p.LoggingLevel = DefaultLoggingLevel
	}
	p.LoggingLevel = strings.ToUpper(p.LoggingLevel)
}

// check validates the settings against the job's inputs and outputs.
func check(s job.Spec, p job.ParallelRun) error {
	in, ok := s.Inputs[p.InputData]
	switch {
	case p.InputData == "":
		return fmt.Errorf("input_data: required (${{inputs.<name>}})")
	case !bindingName.MatchString(p.InputData):
		return fmt.Errorf("input_data: %q is not an input name", p.InputData)
	case !ok:
		return fmt.Errorf("input_data: no input named %q", p.InputData)
	case in.Type != job.URIFolder && in.Type != job.URIFile && in.Type != job.MLTable:
		return fmt.Errorf("input_data: input %s is %s; expected a uri_folder, uri_file or mltable", p.InputData, in.Type)
	case len(p.PartitionKeys) > 0 && in.Type != job.MLTable:
		return fmt.Errorf("partition_keys: input %s is %s; partitions are of an mltable's rows", p.InputData, in.Type)
	}
	for i, k := range p.PartitionKeys {
		if strings.TrimSpace(k) == "" || slices.Contains(p.PartitionKeys[:i], k) {
			return fmt.Errorf("partition_keys[%d]: %q is empty or repeated", i, k)
		}
	}
	if p.AppendRowTo != "" && !bindingName.MatchString(p.AppendRowTo) {
		return fmt.Errorf("task.append_row_to: %q is not an output name", p.AppendRowTo)
	}
	if _, ok := s.Outputs[p.AppendRowTo]; p.AppendRowTo != "" && !ok {
		return fmt.Errorf("task.append_row_to: no output named %q", p.AppendRowTo)
	}
	if f := p.OutputFileName; f != "" && (f != path.Base(f) || f == "." || f == ".." || strings.ContainsAny(f, "\\\x00")) {
		return fmt.Errorf("output_file_name: %q is not a file name", f)
	}
	if _, ok := s.Inputs[p.ModelInput]; p.ModelInput != "" && !ok {
		return fmt.Errorf("model_input: no input named %q", p.ModelInput)
	}
	if _, ok := s.Outputs[p.BIOutput]; p.BIOutput != "" && !ok {
		return fmt.Errorf("bi_output: no output named %q", p.BIOutput)
	}
	switch {
	case p.MLflow && p.EntryScript != "":
		return fmt.Errorf("task.entry_script: %q with Hangar's built-in MLflow batch scorer, which is the entry script", p.EntryScript)
	case p.MLflow && p.ModelInput == "":
		return fmt.Errorf("model_input: required by Hangar's built-in MLflow batch scorer (the MLflow model it loads)")
	case !p.MLflow && !safeRelative(p.EntryScript):
		return fmt.Errorf("task.entry_script: %q is not a path relative to task.code", p.EntryScript)
	}
	if p.MiniBatchBytes < 0 || p.MiniBatchBytes > 0 && p.MiniBatchSize != 0 {
		return fmt.Errorf("mini_batch_size: a count of files or a size, not both (%d and %d bytes)", p.MiniBatchSize, p.MiniBatchBytes)
	}
	for _, c := range []struct {
		field  string
		v, min int
	}{
		{"mini_batch_size", countOrSize(p), 1},
		{"max_concurrency_per_instance", p.MaxConcurrencyPerInstance, 1},
		{"mini_batch_error_threshold", p.MiniBatchErrorThreshold, -1},
		{"error_threshold", p.ErrorThreshold, -1},
		{"retry_settings.max_retries", p.MaxRetries, 0},
		{"retry_settings.timeout", p.TimeoutSeconds, 1},
	} {
		if c.v < c.min {
			return fmt.Errorf("%s: expected an integer >= %d, got %d", c.field, c.min, c.v)
		}
	}
	for _, l := range loggingLevels {
		if p.LoggingLevel == l {
			return nil
		}
	}
	return fmt.Errorf("logging_level: expected one of %s, got %q", strings.Join(loggingLevels, ", "), p.LoggingLevel)
}

// countOrSize is the mini-batch count to check: any size counts as one.
func countOrSize(p job.ParallelRun) int {
	if p.MiniBatchBytes > 0 {
		return 1
	}
	return p.MiniBatchSize
}

// safeRelative reports whether p names a file inside the code folder.
func safeRelative(p string) bool {
	if p == "" || path.IsAbs(p) || strings.ContainsRune(p, 0) || strings.ContainsRune(p, '\\') {
		return false
	}
	c := path.Clean(p)
	return c != "." && c != ".." && !strings.HasPrefix(c, "../")
}
