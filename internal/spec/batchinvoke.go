package spec

import (
	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/serving"
)

// ParseBatchInvokeFile reads the file az ml batch-endpoint invoke --file takes: `inputs:` and
// `outputs:` as a job's (a local path relative to the file, returned absolute and checked to
// exist), and the batch job fields an invoke's --set may name (mini_batch_size,
// output_file_name, error_threshold, logging_level, retry_settings, compute.instance_count,
// output_dataset, job_name, experiment_name), with the rules of ParseJobFile.
func ParseBatchInvokeFile(file string) (*serving.BatchInvocation, []string, error) {
	return parseFile(func(file string, data []byte, dir string, _ []string, _ ...FileOption) (*serving.BatchInvocation, []string, error) {
		return ParseBatchInvoke(file, data, dir)
	}, file, nil)
}

// ParseBatchInvoke is ParseBatchInvokeFile for YAML already read.
func ParseBatchInvoke(file string, data []byte, baseDir string) (*serving.BatchInvocation, []string, error) {
	d, root := begin(file, data, baseDir, nil, nil)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	inv := &serving.BatchInvocation{}
	fs := fields{
		"$schema": nil,
		"inputs":  func(n *yaml.Node, p string) { inv.Inputs = d.jobs.inputs(n, p) },
		"outputs": func(n *yaml.Node, p string) { inv.Outputs = d.jobs.outputs(n, p) },
		"compute": func(n *yaml.Node, p string) {
			d.mapping(n, p, fields{"instance_count": d.serving.batchOverride(&inv.BatchOverrides, "compute.instance_count")})
		},
		"retry_settings": func(n *yaml.Node, p string) {
			d.mapping(n, p, fields{
				"max_retries": d.serving.batchOverride(&inv.BatchOverrides, "retry_settings.max_retries"),
				"timeout":     d.serving.batchOverride(&inv.BatchOverrides, "retry_settings.timeout"),
			})
		},
		"output_dataset": func(n *yaml.Node, p string) {
			// The datastore first, so that the path lands in it whatever the keys' order.
			got := d.mapping(n, p, fields{"datastore_id": nil, "path": nil})
			for _, k := range []string{"datastore_id", "path"} {
				if v := got[k]; v != nil {
					d.serving.batchOverride(&inv.BatchOverrides, "output_dataset."+k)(v, join(p, k))
				}
			}
		},
	}
	for _, k := range []string{"mini_batch_size", "output_file_name", "error_threshold", "logging_level", "job_name", "experiment_name"} {
		fs[k] = d.serving.batchOverride(&inv.BatchOverrides, k)
	}
	d.mapping(root, "", fs)
	return result(d, inv)
}

// batchOverride decodes a scalar into the override az's key names, its errors at the field.
func (d *servingDecoder) batchOverride(o *serving.BatchOverrides, key string) func(*yaml.Node, string) {
	return func(n *yaml.Node, p string) {
		v, ok := d.scalar(n, p, "a value")
		if !ok {
			return
		}
		if err := serving.SetBatchOverride(o, key, v.Value); err != nil {
			d.errorf(n, p, "%v", err)
		}
	}
}
