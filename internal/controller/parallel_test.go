package controller

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

func parallelJob() job.Spec {
	return job.Spec{
		Type:    "parallel",
		Inputs:  map[string]job.Input{"data": {Type: job.URIFolder, Mode: "direct", Path: "https://example.com/data/"}},
		Outputs: map[string]job.Output{"rows": {Type: job.URIFolder}},
		Parallel: &job.ParallelRun{InputData: "data", AppendRowTo: "rows", EntryScript: "score.py",
			ProgramArguments: "--rows ${{outputs.rows}}", MiniBatchSize: 4, MaxConcurrencyPerInstance: 2,
			MiniBatchErrorThreshold: -1, ErrorThreshold: -1, MaxRetries: 3, TimeoutSeconds: 30},
	}
}

// A parallel job is queued as the command job that runs Hangar's driver, its settings kept for
// the supervisor.
func TestCreateParallelJobQueuesTheDriver(t *testing.T) {
	f := newFixture(t)
	r, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: parallelJob()})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	got := f.run(t, r.ID).Spec
	want := `exec python3 "$HANGAR_PARALLEL_DRIVER" --input-data ${{inputs.data}} --append-row-to ${{outputs.rows}} -- --rows ${{outputs.rows}}`
	if got.Type != "command" || got.Command != want || r.Status != job.Queued {
		t.Errorf("stored %s job %q (%s), want a queued command job %q", got.Type, got.Command, r.Status, want)
	}
	if got.Parallel == nil || got.Parallel.MiniBatchSize != 4 || got.Parallel.LoggingLevel != "INFO" {
		t.Errorf("stored settings %+v, want the job's with the defaults", got.Parallel)
	}
}

func TestCreateParallelJobRefusals(t *testing.T) {
	tests := []struct {
		name string
		edit func(*job.Spec)
		want string
	}{
		{"settings on a command job", func(s *job.Spec) { s.Type, s.Command = "command", "echo hi" }, "parallel: set by Hangar for parallel jobs only"},
		{"a parallel job without settings", func(s *job.Spec) { s.Parallel = nil }, "parallel: set by Hangar"},
		{"an unknown output", func(s *job.Spec) { s.Parallel.AppendRowTo = "nope" }, `task.append_row_to: no output named "nope"`},
		{"program arguments bash would run", func(s *job.Spec) { s.Parallel.ProgramArguments = "${{inputs.data" }, "command:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			sp := parallelJob()
			tt.edit(&sp)
			_, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: sp})
			wantKind(t, err, Invalid, tt.want)
		})
	}
}
