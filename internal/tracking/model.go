package tracking

// The tracking model's records, with the JSON names of MLflow's protos (service.proto), so that
// the server answers them as they are. Times are milliseconds since the epoch, as MLflow's.

// Experiment is an MLflow experiment.
type Experiment struct {
	ID               string `json:"experiment_id"`
	Name             string `json:"name"`
	ArtifactLocation string `json:"artifact_location"`
	LifecycleStage   string `json:"lifecycle_stage"`
	LastUpdateTime   int64  `json:"last_update_time"`
	CreationTime     int64  `json:"creation_time"`
	Tags             []KV   `json:"tags,omitempty"`
}

// KV is a key and its value: a param, a run tag, an experiment tag, an input tag.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MetricPoint is one point of a metric's history.
type MetricPoint struct {
	Key       string  `json:"key"`
	Value     float64 `json:"value"`
	Timestamp int64   `json:"timestamp"`
	Step      int64   `json:"step"`
}

// DatasetInfo is a dataset a run used (log-inputs).
type DatasetInfo struct {
	Name       string `json:"name"`
	Digest     string `json:"digest"`
	SourceType string `json:"source_type"`
	Source     string `json:"source"`
	Schema     string `json:"schema,omitempty"`
	Profile    string `json:"profile,omitempty"`
}

// DatasetInput is a dataset with the tags of its use by the run (e.g. mlflow.data.context).
type DatasetInput struct {
	Tags    []KV        `json:"tags,omitempty"`
	Dataset DatasetInfo `json:"dataset"`
}

// RunInfo is MLflow's RunInfo.
type RunInfo struct {
	RunID          string `json:"run_id"`
	RunUUID        string `json:"run_uuid"` // deprecated by MLflow, still sent and read by clients
	RunName        string `json:"run_name"`
	ExperimentID   string `json:"experiment_id"`
	UserID         string `json:"user_id"`
	Status         string `json:"status"`
	StartTime      int64  `json:"start_time"`
	EndTime        *int64 `json:"end_time,omitempty"`
	ArtifactURI    string `json:"artifact_uri"`
	LifecycleStage string `json:"lifecycle_stage"`
}

// RunData is MLflow's RunData: each metric's latest point, params and tags.
type RunData struct {
	Metrics []MetricPoint `json:"metrics,omitempty"`
	Params  []KV          `json:"params,omitempty"`
	Tags    []KV          `json:"tags,omitempty"`
}

// RunInputs is MLflow's RunInputs.
type RunInputs struct {
	DatasetInputs []DatasetInput `json:"dataset_inputs,omitempty"`
	ModelInputs   []ModelIO      `json:"model_inputs,omitempty"`
}

// RunOutputs is MLflow's RunOutputs: the logged models a run produced, with their steps.
type RunOutputs struct {
	ModelOutputs []ModelIO `json:"model_outputs,omitempty"`
}

// Run is MLflow's Run. IsJob (not sent) says whether it is a Hangar job, whose state only the
// controller changes.
type Run struct {
	Info   RunInfo   `json:"info"`
	Data   RunData   `json:"data"`
	Inputs RunInputs `json:"inputs"`
	// Outputs is read by runs/get only (not by searches).
	Outputs *RunOutputs `json:"outputs,omitempty"`
	IsJob   bool        `json:"-"`
}

// Tags that MLflow clients read and write for fields Hangar keeps as columns of a run.
const (
	TagRunName     = "mlflow.runName"
	TagNote        = "mlflow.note.content"
	TagUser        = "mlflow.user"
	TagLoggedModel = "mlflow.log-model.history"
)
