package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/tracking"
)

func createLoggedModel(t *testing.T, s *Store, id, run string) {
	t.Helper()
	m := &tracking.LoggedModel{
		Info: tracking.LoggedModelInfo{ModelID: id, ExperimentID: "0", Name: "model", SourceRunID: run,
			Status: "LOGGED_MODEL_PENDING", Tags: []tracking.KV{{Key: "mlflow.user", Value: "ann"}}},
		Data: tracking.LoggedModelData{Params: []tracking.KV{{Key: "lr", Value: "0.1"}}},
	}
	if err := s.Tracking.CreateLoggedModel(t.Context(), m, time.UnixMilli(1700000000000)); err != nil {
		t.Fatal(err)
	}
}

// A logged model reads back as it was created and then changed: status, params, tags, metrics
// (a point logged twice kept once), with MLflow's artifact URI; deleting it hides it.
func TestLoggedModelLifecycle(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	createArtifactRun(t, s, "r")
	createLoggedModel(t, s, "m-1", "r")
	tr := s.Tracking
	if err := tr.SetLoggedModelStatus(ctx, "m-1", tracking.LoggedModelReady, ""); err != nil {
		t.Fatal(err)
	}
	if err := tr.LogLoggedModelParams(ctx, "m-1", []tracking.KV{{Key: "depth", Value: "3"}, {Key: "lr", Value: "0.2"}}); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetLoggedModelTags(ctx, "m-1", []tracking.KV{{Key: "team", Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	p := tracking.ModelMetric{Key: "acc", Value: 0.9, Timestamp: 5, Step: 1, ModelID: "m-1", RunID: "r", DatasetName: "iris"}
	if err := tr.LogLoggedModelMetrics(ctx, []tracking.ModelMetric{p, p}); err != nil {
		t.Fatal(err)
	}
	got, err := tr.LoggedModel(ctx, "m-1")
	if err != nil {
		t.Fatal(err)
	}
	got.Info.LastUpdatedTimestampMs = 0
	want := &tracking.LoggedModel{
		Info: tracking.LoggedModelInfo{ModelID: "m-1", ExperimentID: "0", Name: "model", SourceRunID: "r",
			CreationTimestampMs: 1700000000000, Status: "LOGGED_MODEL_READY",
			ArtifactURI: "mlflow-artifacts:/0/models/m-1/artifacts",
			Tags:        []tracking.KV{{Key: "mlflow.user", Value: "ann"}, {Key: "team", Value: "a"}}},
		Data: tracking.LoggedModelData{Params: []tracking.KV{{Key: "depth", Value: "3"}, {Key: "lr", Value: "0.2"}},
			Metrics: []tracking.ModelMetric{p}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logged model (-want +got):\n%s", diff)
	}
	if err := tr.DeleteLoggedModelTag(ctx, "m-1", "nope"); !errors.Is(err, ErrNotFound) ||
		!strings.Contains(err.Error(), "No tag with key 'nope' found for model with ID 'm-1'.") {
		t.Errorf("delete a missing tag: %v", err)
	}
	if err := tr.DeleteLoggedModel(ctx, "m-1"); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"get":      func() error { _, err := tr.LoggedModel(ctx, "m-1"); return err }(),
		"finalize": tr.SetLoggedModelStatus(ctx, "m-1", tracking.LoggedModelReady, ""),
		"delete":   tr.DeleteLoggedModel(ctx, "m-1"),
		"metrics":  tr.LogLoggedModelMetrics(ctx, []tracking.ModelMetric{p}),
	} {
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Logged model with ID 'm-1' not found.") {
			t.Errorf("%s of a deleted model: %v", what, err)
		}
	}
	if ms, err := tr.LoggedModels(ctx, LoggedModelQuery{RunID: "r"}); err != nil || len(ms) != 0 {
		t.Errorf("the run's models after the delete: %v, %v", ms, err)
	}
}

// A model needs an active experiment and an existing source run.
func TestLoggedModelCreateChecks(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	for _, c := range []struct {
		name string
		info tracking.LoggedModelInfo
		want string
	}{
		{"no experiment", tracking.LoggedModelInfo{ModelID: "m-a", ExperimentID: "42"}, "No Experiment with id=42 exists"},
		{"no run", tracking.LoggedModelInfo{ModelID: "m-b", ExperimentID: "0", SourceRunID: "ghost"}, "Run with id=ghost not found"},
	} {
		err := s.Tracking.CreateLoggedModel(ctx, &tracking.LoggedModel{Info: c.info}, time.Now())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// A run's models are listed by run and by experiment; its inputs and outputs show in runs/get;
// deleting the run deletes its models and their files.
func TestLoggedModelsOfARun(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	createArtifactRun(t, s, "r")
	createLoggedModel(t, s, "m-1", "r")
	createLoggedModel(t, s, "m-2", "")
	tr := s.Tracking
	step := int64(3)
	if err := tr.LogRunModels(ctx, "r", ModelOutput, []tracking.ModelIO{{ModelID: "m-1", Step: &step}}); err != nil {
		t.Fatal(err)
	}
	if err := tr.LogRunModels(ctx, "r", ModelInput, []tracking.ModelIO{{ModelID: "m-2"}, {ModelID: "m-2"}}); err != nil {
		t.Fatal(err)
	}
	if err := tr.LogRunModels(ctx, "r", ModelInput, []tracking.ModelIO{{ModelID: "m-ghost"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown model as input: %v", err)
	}
	run, err := tr.TrackingRun(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]tracking.ModelIO{{ModelID: "m-2"}}, run.Inputs.ModelInputs); diff != "" {
		t.Errorf("model inputs (-want +got):\n%s", diff)
	}
	if run.Outputs == nil || len(run.Outputs.ModelOutputs) != 1 || *run.Outputs.ModelOutputs[0].Step != 3 {
		t.Errorf("model outputs = %+v", run.Outputs)
	}
	byRun, _ := tr.LoggedModels(ctx, LoggedModelQuery{RunID: "r"})
	byExp, _ := tr.LoggedModels(ctx, LoggedModelQuery{ExperimentIDs: []string{"0"}})
	if len(byRun) != 1 || byRun[0].Info.ModelID != "m-1" || len(byExp) != 2 {
		t.Errorf("by run %v, by experiment %v", byRun, byExp)
	}
	if err := tr.PutLoggedModelArtifact(ctx, "m-1", MLflowArtifact{Path: "MLmodel", Hash: strings.Repeat("ab", 32), Size: 3}); err != nil {
		t.Fatal(err)
	}
	if err := tr.PutLoggedModelArtifact(ctx, "m-1", MLflowArtifact{Path: "MLmodel/x", Hash: strings.Repeat("ab", 32), Size: 3}); !errors.Is(err, ErrPathTaken) {
		t.Errorf("a file below a file: %v", err)
	}
	if a, err := tr.LoggedModelArtifact(ctx, "m-1", "MLmodel"); err != nil || a.Size != 3 {
		t.Errorf("artifact = %+v, %v", a, err)
	}
	if _, err := tr.MLflowArtifact(ctx, "r", "MLmodel"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a model's file is not the run's: %v", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, "r"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"logged_models", "logged_model_artifacts", "run_logged_models", "logged_model_params"} {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE `+map[bool]string{true: "id", false: "model_id"}[table == "logged_models"]+` = 'm-1'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s rows of m-1 left after its run was deleted: %d, %v", table, n, err)
		}
	}
}
