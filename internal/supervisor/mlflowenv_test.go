package supervisor

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// A job's MLflow client logs to its own run on the server its supervisor talks to, with the
// run's token; a job's own environment_variables win.
func TestMLflowVariables(t *testing.T) {
	const unset = "(unset)"
	t.Setenv("MLFLOW_EXPERIMENT_NAME", "the node's, not the run's")
	for _, tc := range []struct {
		name string
		spec job.Spec
		want map[string]string // unset: a variable the command does not get
	}{
		{"defaults", job.Spec{ExperimentName: "mnist"}, map[string]string{
			"MLFLOW_TRACKING_URI": "http://127.0.0.1:4242", "MLFLOW_TRACKING_TOKEN": "tok",
			"MLFLOW_RUN_ID": "r", "MLFLOW_EXPERIMENT_NAME": "mnist"}},
		{"no experiment", job.Spec{}, map[string]string{
			"MLFLOW_TRACKING_URI": "http://127.0.0.1:4242", "MLFLOW_RUN_ID": "r", "MLFLOW_EXPERIMENT_NAME": unset}},
		{"the job's own server", job.Spec{ExperimentName: "mnist", EnvironmentVariables: map[string]string{
			"MLFLOW_TRACKING_URI": "https://mlflow.example.com", "MLFLOW_TRACKING_TOKEN": "theirs"}}, map[string]string{
			"MLFLOW_TRACKING_URI": "https://mlflow.example.com", "MLFLOW_TRACKING_TOKEN": "theirs", "MLFLOW_RUN_ID": "r"}},
		{"another server, no token: the run token is not sent there", job.Spec{EnvironmentVariables: map[string]string{
			"MLFLOW_TRACKING_URI": "https://mlflow.example.com"}}, map[string]string{
			"MLFLOW_TRACKING_URI": "https://mlflow.example.com", "MLFLOW_TRACKING_TOKEN": unset, "HANGAR_RUN_TOKEN": "tok"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSupervisor(t, "http://127.0.0.1:4242/", 0)
			s.spec.Spec = tc.spec
			vars := s.environment.vars(&workspace{dir: t.TempDir()}, nil)
			got := map[string]string{}
			for k := range tc.want {
				v, ok := vars[k]
				if !ok {
					v = unset
				}
				got[k] = v
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MLflow variables (-want +got):\n%s", diff)
			}
		})
	}
}
