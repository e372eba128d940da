package serving

import (
	"maps"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
)

// AuthAADToken is a batch endpoint's only auth_mode in Azure. A self-hosted workspace has no
// Microsoft Entra ID: the workspace token opens its batch endpoints.
const AuthAADToken = "aad_token"

// Output actions of a batch deployment (settings.output_action).
const (
	OutputAppendRow   = "append_row"   // what run() returns is appended to OutputFileName
	OutputSummaryOnly = "summary_only" // the script writes its own outputs
)

// Batch scoring names, as on Azure.
const (
	// BatchInput is the name of a batch job's input (the folder or file scored).
	BatchInput = "input_data"
	// BatchOutput is the name of a batch job's output (Azure's `score`).
	BatchOutput = "score"
	// DefaultOutputFileName is settings.output_file_name's default.
	DefaultOutputFileName = "predictions.csv"
	// Tags a batch job carries: the endpoint and deployment it scores for.
	TagBatchEndpoint   = "hangar.batch_endpoint"
	TagBatchDeployment = "hangar.batch_deployment"
)

// BatchEndpoint is a batch endpoint: a name that invoking turns into a batch scoring job run by
// one of its deployments.
type BatchEndpoint struct {
	Name string `json:"name"`
	asset.Meta
	AuthMode string `json:"auth_mode"`
	// DefaultDeployment is defaults.deployment_name: the deployment an invoke runs unless it
	// names one.
	DefaultDeployment string `json:"default_deployment,omitempty"`
}

// BatchDeployment is a model scored over files by a parallel job (`type: model`).
type BatchDeployment struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint_name"`
	asset.Meta
	Model ModelRef `json:"model"`
	// Code, CodeSnapshot and ScoringScript are code_configuration: the entry script with
	// init() and run(mini_batch), as for a parallel job's task.
	Code          string          `json:"code,omitempty"`
	CodeSnapshot  string          `json:"code_snapshot,omitempty"`
	ScoringScript string          `json:"scoring_script"`
	Environment   job.Environment `json:"environment"`
	// Compute is the cluster the jobs run on (azureml: prefix removed); required.
	Compute       string         `json:"compute"`
	InstanceCount int            `json:"instance_count"`
	Settings      BatchSettings  `json:"settings"`
	Extra         map[string]any `json:"extra,omitempty"`
}

// ServesMLflowModel says the batch deployment is a no-code MLflow deployment: an MLflow model
// with no scoring script, whose jobs run Hangar's built-in MLflow batch scorer as their entry
// script (serving/scoring's mlflow_batch.py).
func (d BatchDeployment) ServesMLflowModel() bool {
	return d.Model.Type == mlflowModel && d.ScoringScript == ""
}

// BatchSettings is a batch deployment's `settings:`.
type BatchSettings struct {
	MaxConcurrencyPerInstance int               `json:"max_concurrency_per_instance"`
	MiniBatchSize             int               `json:"mini_batch_size"`
	MiniBatchBytes            int64             `json:"mini_batch_bytes,omitempty"` // a size ("10kb") instead of a count
	OutputAction              string            `json:"output_action"`
	OutputFileName            string            `json:"output_file_name"`
	ErrorThreshold            int               `json:"error_threshold"`
	MaxRetries                int               `json:"max_retries"`
	Timeout                   int               `json:"timeout"` // seconds per mini-batch
	LoggingLevel              string            `json:"logging_level"`
	EnvironmentVariables      map[string]string `json:"environment_variables,omitempty"`
}

// DefaultBatchSettings are Azure's documented defaults.
func DefaultBatchSettings() BatchSettings {
	return BatchSettings{MaxConcurrencyPerInstance: 1, MiniBatchSize: 10, OutputAction: OutputAppendRow,
		OutputFileName: DefaultOutputFileName, ErrorThreshold: -1, MaxRetries: 3, Timeout: 30,
		LoggingLevel: "info"}
}

// BatchJobSpec is the parallel job one invoke of deployment d runs over input: the deployment's
// code and scoring script as the entry script, its environment, its model as an input laid out
// under AZUREML_MODEL_DIR (modelManifest "" : none), and the output `score`; a no-code MLflow
// deployment's entry script is Hangar's built-in MLflow batch scorer. The caller queues it as
// any parallel job (parallel.ToCommand checks it).
func BatchJobSpec(d BatchDeployment, modelManifest string, input job.Input) job.Spec {
	st := d.Settings
	p := &job.ParallelRun{
		InputData: BatchInput, EntryScript: d.ScoringScript, MiniBatchSize: st.MiniBatchSize, MiniBatchBytes: st.MiniBatchBytes,
		MaxConcurrencyPerInstance: st.MaxConcurrencyPerInstance, MiniBatchErrorThreshold: -1,
		ErrorThreshold: st.ErrorThreshold, MaxRetries: st.MaxRetries, TimeoutSeconds: st.Timeout,
		LoggingLevel: st.LoggingLevel,
	}
	if st.OutputAction != OutputSummaryOnly {
		p.AppendRowTo, p.OutputFileName = BatchOutput, st.OutputFileName
	}
	p.BIOutput = BatchOutput
	sp := job.Spec{
		Type:           "parallel",
		DisplayName:    "batchscoring",
		ExperimentName: "batch-endpoint-" + d.Endpoint,
		Meta: asset.Meta{
			Description: "batch scoring by deployment " + d.Name + " of batch endpoint " + d.Endpoint,
			Tags:        map[string]string{TagBatchEndpoint: d.Endpoint, TagBatchDeployment: d.Name},
		},
		CodeSnapshot:         d.CodeSnapshot,
		Environment:          d.Environment,
		Compute:              d.Compute,
		Resources:            job.Resources{InstanceCount: max(d.InstanceCount, 1)},
		EnvironmentVariables: maps.Clone(st.EnvironmentVariables),
		Inputs:               map[string]job.Input{BatchInput: input},
		Outputs:              map[string]job.Output{BatchOutput: {Type: job.URIFolder}},
		Parallel:             p,
	}
	if modelManifest != "" {
		sp.Inputs[ModelInput] = job.Input{Type: job.URIFolder, Manifest: modelManifest}
		p.ModelInput, p.ModelFolder = ModelInput, d.Model.Folder
	}
	p.MLflow = d.ServesMLflowModel()
	return sp
}
