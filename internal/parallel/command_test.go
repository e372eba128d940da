package parallel

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

func parallelSpec(edit func(*job.Spec)) job.Spec {
	s := job.Spec{
		Type:    "parallel",
		Code:    "/src",
		Inputs:  map[string]job.Input{"data": {Type: job.URIFolder, Path: "/data"}, "model": {Type: job.URIFolder, Path: "/m"}},
		Outputs: map[string]job.Output{"rows": {Type: job.URIFolder}},
		Parallel: &job.ParallelRun{InputData: "data", AppendRowTo: "rows", EntryScript: "score.py",
			MiniBatchSize: 4, MaxConcurrencyPerInstance: 2, MiniBatchErrorThreshold: -1, ErrorThreshold: -1,
			MaxRetries: 3, TimeoutSeconds: 30, LoggingLevel: "INFO"},
	}
	if edit != nil {
		edit(&s)
	}
	return s
}

func TestToCommand(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*job.Spec)
		command string
		want    job.ParallelRun // the settings the supervisor gets
	}{
		{
			name:    "append_row_to and program arguments",
			edit:    func(s *job.Spec) { s.Parallel.ProgramArguments = "  --model ${{inputs.model}}\n" },
			command: `exec python3 "$HANGAR_PARALLEL_DRIVER" --input-data ${{inputs.data}} --append-row-to ${{outputs.rows}} -- --model ${{inputs.model}}`,
			want: job.ParallelRun{InputData: "data", AppendRowTo: "rows", EntryScript: "score.py", ProgramArguments: "  --model ${{inputs.model}}\n",
				MiniBatchSize: 4, MaxConcurrencyPerInstance: 2, MiniBatchErrorThreshold: -1, ErrorThreshold: -1,
				MaxRetries: 3, TimeoutSeconds: 30, LoggingLevel: "INFO"},
		},
		{
			name:    "summary_only: no append_row_to",
			edit:    func(s *job.Spec) { s.Parallel.AppendRowTo = "" },
			command: `exec python3 "$HANGAR_PARALLEL_DRIVER" --input-data ${{inputs.data}} --`,
			want: job.ParallelRun{InputData: "data", EntryScript: "score.py", MiniBatchSize: 4, MaxConcurrencyPerInstance: 2,
				MiniBatchErrorThreshold: -1, ErrorThreshold: -1, MaxRetries: 3, TimeoutSeconds: 30, LoggingLevel: "INFO"},
		},
		{
			name: "defaults for a spec sent straight to the API",
			edit: func(s *job.Spec) {
				s.Parallel = &job.ParallelRun{InputData: "data", EntryScript: "sub/score.py", LoggingLevel: "debug"}
			},
			command: `exec python3 "$HANGAR_PARALLEL_DRIVER" --input-data ${{inputs.data}} --`,
			want: job.ParallelRun{InputData: "data", EntryScript: "sub/score.py", MiniBatchSize: 10, MaxConcurrencyPerInstance: 1,
				TimeoutSeconds: 60, LoggingLevel: "DEBUG"},
		},
		{
			name: "mini-batches by size over an mltable, partitioned: no count is added",
			edit: func(s *job.Spec) {
				s.Inputs["data"] = job.Input{Type: job.MLTable, Path: "/table"}
				s.Parallel = &job.ParallelRun{InputData: "data", EntryScript: "score.py", MiniBatchBytes: 10 << 10, PartitionKeys: []string{"store"}}
			},
			command: `exec python3 "$HANGAR_PARALLEL_DRIVER" --input-data ${{inputs.data}} --`,
			want: job.ParallelRun{InputData: "data", EntryScript: "score.py", MiniBatchBytes: 10 << 10, PartitionKeys: []string{"store"},
				MaxConcurrencyPerInstance: 1, TimeoutSeconds: 60, LoggingLevel: "INFO"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := parallelSpec(tt.edit)
			got, err := ToCommand(in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != "command" || got.Command != tt.command {
				t.Errorf("type %q command %q\nwant command %q", got.Type, got.Command, tt.command)
			}
			if diff := cmp.Diff(tt.want, *got.Parallel); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if got.Code != in.Code || len(got.Inputs) != len(in.Inputs) {
				t.Errorf("code %q inputs %v: the job's code and inputs must be kept", got.Code, got.Inputs)
			}
		})
	}
}

func TestToCommandRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*job.Spec)
		want string
	}{
		{"a command job", func(s *job.Spec) { s.Type = "command" }, "parallel: set by Hangar for parallel jobs only"},
		{"no settings", func(s *job.Spec) { s.Parallel = nil }, "parallel: set by Hangar"},
		{"a command", func(s *job.Spec) { s.Command = "rm -rf /" }, "command: a parallel job has no command"},
		{"a distribution", func(s *job.Spec) { s.Distribution = &job.Distribution{Type: "pytorch"} }, "distribution:"},
		{"no input_data", func(s *job.Spec) { s.Parallel.InputData = "" }, "input_data: required"},
		{"unknown input", func(s *job.Spec) { s.Parallel.InputData = "nope" }, `input_data: no input named "nope"`},
		{"input name that is shell text", func(s *job.Spec) {
			s.Parallel.InputData = "x}} ; touch /tmp/pwned ${{inputs.x"
			s.Inputs[s.Parallel.InputData] = job.Input{Type: job.URIFolder}
		}, "input_data: \"x}} ; touch /tmp/pwned ${{inputs.x\" is not an input name"},
		{"literal input", func(s *job.Spec) {
			s.Inputs["n"] = job.Input{Type: job.InputInteger, Value: "3"}
			s.Parallel.InputData = "n"
		}, "input_data: input n is integer; expected a uri_folder, uri_file or mltable"},
		{"unknown output", func(s *job.Spec) { s.Parallel.AppendRowTo = "other" }, `task.append_row_to: no output named "other"`},
		{"output name that is shell text", func(s *job.Spec) { s.Parallel.AppendRowTo = "a;b" }, "is not an output name"},
		{"absolute entry script", func(s *job.Spec) { s.Parallel.EntryScript = "/etc/x.py" }, "task.entry_script:"},
		{"entry script out of the code", func(s *job.Spec) { s.Parallel.EntryScript = "a/../../x.py" }, "task.entry_script:"},
		{"no entry script", func(s *job.Spec) { s.Parallel.EntryScript = "" }, "task.entry_script:"},
		{"negative batch", func(s *job.Spec) { s.Parallel.MiniBatchSize = -2 }, "mini_batch_size: expected an integer >= 1, got -2"},
		{"a count and a size", func(s *job.Spec) { s.Parallel.MiniBatchBytes = 100 }, "mini_batch_size: a count of files or a size, not both (4 and 100 bytes)"},
		{"partitions of files", func(s *job.Spec) { s.Parallel.PartitionKeys = []string{"store"} }, "partition_keys: input data is uri_folder; partitions are of an mltable's rows"},
		{"a repeated partition key", func(s *job.Spec) {
			s.Inputs["data"] = job.Input{Type: job.MLTable, Path: "/table"}
			s.Parallel.PartitionKeys = []string{"store", "store"}
		}, `partition_keys[1]: "store" is empty or repeated`},
		{"threshold below -1", func(s *job.Spec) { s.Parallel.MiniBatchErrorThreshold = -5 }, "mini_batch_error_threshold: expected an integer >= -1"},
		{"negative retries", func(s *job.Spec) { s.Parallel.MaxRetries = -1 }, "retry_settings.max_retries: expected an integer >= 0"},
		{"bad logging level", func(s *job.Spec) { s.Parallel.LoggingLevel = "loud" }, `logging_level: expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got "LOUD"`},
		{"output file in another folder", func(s *job.Spec) { s.Parallel.OutputFileName = "../x.csv" }, `output_file_name: "../x.csv" is not a file name`},
		{"unknown model input", func(s *job.Spec) { s.Parallel.ModelInput = "ghost" }, `model_input: no input named "ghost"`},
		{"unknown bi output", func(s *job.Spec) { s.Parallel.BIOutput = "ghost" }, `bi_output: no output named "ghost"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ToCommand(parallelSpec(tt.edit))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// ToCommand does not change the spec it is given (the controller keeps the request's).
func TestToCommandLeavesItsInputAlone(t *testing.T) {
	in := parallelSpec(nil)
	in.Parallel.LoggingLevel = "debug"
	if _, err := ToCommand(in); err != nil {
		t.Fatal(err)
	}
	if in.Type != "parallel" || in.Parallel.LoggingLevel != "debug" || in.Command != "" {
		t.Errorf("input changed: %+v %+v", in, in.Parallel)
	}
}
