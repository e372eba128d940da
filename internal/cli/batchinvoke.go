package cli

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/spec"
)

// batchInvokeFlags are az ml batch-endpoint invoke's flags.
type batchInvokeFlags struct {
	name, deployment, input, inputType, file string
	outputPath, jobName, experiment          string
	miniBatchSize, instanceCount             int
	sets                                     []string
}

func newBatchInvokeCmd(env *Env) *cobra.Command {
	var f batchInvokeFlags
	cmd := &cobra.Command{
		Use:   "invoke",
		Short: "Score a folder or file: queue a batch scoring job and print its name",
		Long: `invoke queues a parallel job of the deployment (the endpoint's default unless --deployment-name)
over --input: a local folder or file (uploaded like a job input), azureml://jobs/<job>/outputs/<name>,
or another URI a job's input accepts. Follow it with hangar job stream -n JOB;
its rows are the output "score" (hangar job download -n JOB --output-name score).

--file reads Azure's invocation file instead: inputs: with the one folder or file to score
(any name; a local path is relative to the file) and outputs: with score's path.

What the deployment says is used, except what this job changes, for it alone (the stored
deployment stays as it is): --mini-batch-size, --instance-count, --output-path (the output
score is written at azureml://datastores/workspaceblobstore/paths/<path>, where a later job or
data asset reads it), --job-name, --experiment-name, and --set of Azure's batch job fields:
` + strings.Join(serving.BatchSetKeys(), ", ") + `.`,
		Example: `  hangar batch-endpoint invoke -n mnist-batch --input ./images
  hangar batch-endpoint invoke -n mnist-batch -d mnist-torch --input azureml://jobs/prep-1/outputs/images
  hangar batch-endpoint invoke -n mnist-batch --input ./table.csv --input-type uri_file
  hangar batch-endpoint invoke -n mnist-batch --input ./images --mini-batch-size 20 --instance-count 2
  hangar batch-endpoint invoke -n mnist-batch --input ./images --output-path azureml://datastores/workspaceblobstore/paths/mnist --set output_file_name=today.csv
  hangar batch-endpoint invoke -n mnist-batch -f inputs.yml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBatchInvoke(cmd, env, f)
		},
	}
	fl := cmd.Flags()
	addNameTarget(cmd, &f.name, "batch endpoint name")
	fl.StringVarP(&f.deployment, "deployment-name", "d", "", "deployment (default: the endpoint's default)")
	fl.StringVar(&f.input, "input", "", "folder or file to score: a local path or an azureml: URI")
	fl.StringVar(&f.inputType, "input-type", "", "uri_folder or uri_file (default: from the local path, else uri_folder)")
	fl.StringVarP(&f.file, "file", "f", "", "invocation YAML file: inputs: (the one folder or file to score), outputs: (score's path)")
	fl.IntVar(&f.miniBatchSize, "mini-batch-size", 0, "files per run() call, for this job")
	fl.IntVar(&f.instanceCount, "instance-count", 0, "nodes the job runs on, for this job")
	fl.StringVar(&f.outputPath, "output-path", "", "where the output score is written: azureml://datastores/workspaceblobstore/paths/<path>")
	fl.StringVar(&f.jobName, "job-name", "", "the job's name (default: a generated one)")
	fl.StringVar(&f.experiment, "experiment-name", "", "the job's experiment (default: batch-endpoint-<endpoint>)")
	fl.StringArrayVar(&f.sets, "set", nil, "change a batch job field for this job: --set output_file_name=out.csv (repeatable)")
	return cmd
}

func runBatchInvoke(cmd *cobra.Command, env *Env, f batchInvokeFlags) error {
	if f.input == "" && f.file == "" {
		return usageError("give --input (the folder or file to score) or --file (an invocation file with inputs:)")
	}
	inv, err := batchInvocation(cmd, env, f)
	if err != nil {
		return err
	}
	c, err := env.client(cmd.Context())
	if err != nil {
		return err
	}
	u := env.newUploader(c)
	defer u.close()
	req := api.BatchInvokeRequest{Deployment: f.deployment, BatchInvocation: *inv}
	if f.input != "" {
		if req.Input, err = batchInput(cmd, u, f.input, f.inputType); err != nil {
			return err
		}
	}
	if err := uploadInvokeInputs(cmd, u, req.Inputs); err != nil {
		return fileError(f.file, err)
	}
	run, err := c.BatchEndpoints.Invoke(cmd.Context(), f.name, req)
	if err != nil {
		return err
	}
	return env.printData(run, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "Batch job %s queued (deployment %s); follow it with: hangar job stream -n %s\n",
			run.ID, run.Tags[serving.TagBatchDeployment], run.ID)
		return err
	})
}

// batchInvocation is what the invoke changes: the file's inputs, outputs and fields, then the
// flags, then --set (the last word wins, as az applies them).
func batchInvocation(cmd *cobra.Command, env *Env, f batchInvokeFlags) (*serving.BatchInvocation, error) {
	inv := &serving.BatchInvocation{}
	if f.file != "" {
		read, warnings, err := spec.ParseBatchInvokeFile(f.file)
		if err != nil {
			return nil, specError(err)
		}
		env.warn(warnings)
		inv = read
	}
	o := &inv.BatchOverrides
	if cmd.Flags().Changed("mini-batch-size") {
		o.MiniBatchSize = &f.miniBatchSize
	}
	if cmd.Flags().Changed("instance-count") {
		o.InstanceCount = &f.instanceCount
	}
	if f.outputPath != "" {
		o.OutputPath = f.outputPath
	}
	if f.jobName != "" {
		o.JobName = f.jobName
	}
	if f.experiment != "" {
		o.ExperimentName = f.experiment
	}
	for _, kv := range f.sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageError("--set %s: expected key=value", kv)
		}
		if err := serving.SetBatchOverride(o, strings.TrimSpace(k), v); err != nil {
			return nil, usageError("--set %s: %v", kv, err)
		}
	}
	return inv, nil
}

// uploadInvokeInputs uploads the invocation file's local inputs (absolute paths, checked by
// the spec) and names them by their manifests.
func uploadInvokeInputs(cmd *cobra.Command, u *uploader, inputs map[string]job.Input) error {
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		in := inputs[name]
		if in.IsLiteral() || in.Manifest != "" || !filepath.IsAbs(in.Path) {
			continue
		}
		h, err := u.data(cmd.Context(), name, in.Path, in.Type == job.URIFile)
		if err != nil {
			return fmt.Errorf("inputs.%s: %w", name, err)
		}
		in.Path, in.Manifest = "", h
		inputs[name] = in
	}
	return nil
}

// batchInput turns --input into the job's input: a URI as given, a local path uploaded.
func batchInput(cmd *cobra.Command, u *uploader, input, inputType string) (job.Input, error) {
	switch inputType {
	case "", job.URIFolder, job.URIFile:
	default:
		return job.Input{}, usageError("--input-type: %q; expected uri_folder or uri_file", inputType)
	}
	if strings.Contains(input, "://") || strings.HasPrefix(strings.ToLower(input), "azureml:") {
		if inputType == "" {
			inputType = job.URIFolder
		}
		return job.Input{Type: inputType, Path: input}, nil
	}
	st, err := os.Stat(input)
	if err != nil {
		return job.Input{}, usageError("--input: %v", err)
	}
	switch {
	case inputType == "" && st.IsDir():
		inputType = job.URIFolder
	case inputType == "":
		inputType = job.URIFile
	case (inputType == job.URIFolder) != st.IsDir():
		return job.Input{}, usageError("--input %s is %s, not a %s", input, map[bool]string{true: "a folder", false: "a file"}[st.IsDir()], inputType)
	}
	h, err := u.data(cmd.Context(), serving.BatchInput, input, !st.IsDir())
	if err != nil {
		return job.Input{}, err
	}
	return job.Input{Type: inputType, Manifest: h}, nil
}
