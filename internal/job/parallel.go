package job

// ParallelRun is what makes a run a `type: parallel` job (Azure's parallelJob): its command runs
// Hangar's parallel driver (the supervisor writes it beside the run and names it in
// $HANGAR_PARALLEL_DRIVER), which splits InputData into mini-batches and calls the entry
// script's run() on them in worker processes. A job file's parallel settings arrive here with
// Spec.Type "parallel"; the server turns the spec into a command job that keeps this field.
type ParallelRun struct {
	// InputData and AppendRowTo name the input that is split and the output the returned rows
	// are appended to ("" : summary_only, the script writes its own outputs).
	InputData   string `json:"input_data"`
	AppendRowTo string `json:"append_row_to,omitempty"`
	// EntryScript is task.entry_script, relative to the code folder; ProgramArguments is
	// task.program_arguments (shell text with ${{ }} references, bound like a command).
	EntryScript      string `json:"entry_script"`
	ProgramArguments string `json:"program_arguments,omitempty"`
	// MiniBatchSize is the number of files per run() call; MiniBatchBytes, when set, replaces
	// it: mini_batch_size given as a size ("10kb"), the bytes of files, lines or rows per call.
	MiniBatchSize  int   `json:"mini_batch_size"`
	MiniBatchBytes int64 `json:"mini_batch_bytes,omitempty"`
	// PartitionKeys (an mltable InputData only) makes one mini-batch of the rows that share
	// the values of these columns.
	PartitionKeys             []string `json:"partition_keys,omitempty"`
	MaxConcurrencyPerInstance int      `json:"max_concurrency_per_instance"`
	// MiniBatchErrorThreshold is the number of failed mini-batches the job tolerates and
	// ErrorThreshold the number of failed files (-1: any), as in Azure.
	MiniBatchErrorThreshold int `json:"mini_batch_error_threshold"`
	ErrorThreshold          int `json:"error_threshold"`
	// MaxRetries and TimeoutSeconds are retry_settings: a mini-batch that fails or runs past
	// the timeout is tried again up to MaxRetries times.
	MaxRetries     int    `json:"max_retries"`
	TimeoutSeconds int    `json:"timeout"`
	LoggingLevel   string `json:"logging_level"`
	// OutputFileName is the row file's name in a folder AppendRowTo (a batch deployment's
	// output_file_name; "" : parallel_run_step.txt).
	OutputFileName string `json:"output_file_name,omitempty"`
	// ModelInput names the input holding a batch deployment's model and ModelFolder the folder
	// its files sit under in AZUREML_MODEL_DIR, as for an online deployment's replica.
	ModelInput  string `json:"model_input,omitempty"`
	ModelFolder string `json:"model_folder,omitempty"`
	// BIOutput names the output whose folder $AZUREML_BI_OUTPUT_PATH gives the script (a batch
	// deployment's `score`, where a summary_only script writes its own files).
	BIOutput string `json:"bi_output,omitempty"`
	// MLflow says the entry script is Hangar's built-in MLflow batch scorer (EntryScript empty):
	// a no-code batch deployment of an MLflow model, whose model is ModelInput.
	MLflow bool `json:"mlflow,omitempty"`
}
