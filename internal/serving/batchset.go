package serving

import (
	"fmt"
	"strconv"
	"strings"
)

// batchSetter sets one override from az's --set key=value (the value as text).
type batchSetter struct {
	keys []string // az's key first, then the others Hangar reads as it
	set  func(o *BatchOverrides, v string) error
}

// batchSetters are the keys az ml batch-endpoint invoke --set takes: Azure's batch job fields.
var batchSetters = []batchSetter{
	{[]string{"mini_batch_size"}, setInt(func(o *BatchOverrides) **int { return &o.MiniBatchSize })},
	{[]string{"compute.instance_count", "instance_count", "resources.instance_count"},
		setInt(func(o *BatchOverrides) **int { return &o.InstanceCount })},
	{[]string{"output_file_name"}, setText(func(o *BatchOverrides) *string { return &o.OutputFileName })},
	{[]string{"error_threshold"}, setInt(func(o *BatchOverrides) **int { return &o.ErrorThreshold })},
	{[]string{"retry_settings.max_retries", "max_retries"}, setInt(func(o *BatchOverrides) **int { return &o.MaxRetries })},
	{[]string{"retry_settings.timeout", "timeout"}, setInt(func(o *BatchOverrides) **int { return &o.Timeout })},
	{[]string{"logging_level"}, setText(func(o *BatchOverrides) *string { return &o.LoggingLevel })},
	{[]string{"output_dataset.datastore_id"}, setOutputDatastore},
	{[]string{"output_dataset.path"}, setOutputDatastorePath},
	{[]string{"job_name"}, setText(func(o *BatchOverrides) *string { return &o.JobName })},
	{[]string{"experiment_name"}, setText(func(o *BatchOverrides) *string { return &o.ExperimentName })},
}

// BatchSetKeys are az's keys that SetBatchOverride takes, in the order help lists them.
func BatchSetKeys() []string {
	keys := make([]string, 0, len(batchSetters))
	for _, s := range batchSetters {
		keys = append(keys, s.keys[0])
	}
	return keys
}

// SetBatchOverride sets the override az's key names (--set key=value, or the key in an
// invocation file) from its text. The error says what the value should be; the caller names
// where it was written.
func SetBatchOverride(o *BatchOverrides, key, value string) error {
	for _, s := range batchSetters {
		for _, k := range s.keys {
			if k == key {
				return s.set(o, unquote(strings.TrimSpace(value)))
			}
		}
	}
	return fmt.Errorf("not a field an invoke sets (it takes %s)", strings.Join(BatchSetKeys(), ", "))
}

func setInt(field func(*BatchOverrides) **int) func(*BatchOverrides, string) error {
	return func(o *BatchOverrides, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("expected an integer, got %q", v)
		}
		*field(o) = &n
		return nil
	}
}

func setText(field func(*BatchOverrides) *string) func(*BatchOverrides, string) error {
	return func(o *BatchOverrides, v string) error {
		if v == "" {
			return fmt.Errorf("expected a value, got nothing")
		}
		*field(o) = v
		return nil
	}
}

// setOutputDatastore is output_dataset.datastore_id: azureml:<ds>, <ds>, or an id ending in
// datastores/<ds>; the path stays the one output_dataset.path or --output-path gave.
func setOutputDatastore(o *BatchOverrides, v string) error {
	ds := strings.TrimPrefix(v, "azureml:")
	if i := strings.LastIndex(ds, "datastores/"); i >= 0 {
		ds = ds[i+len("datastores/"):]
	}
	ds = strings.Trim(ds, "/")
	if ds == "" || strings.Contains(ds, "/") {
		return fmt.Errorf("expected a datastore (azureml:<name>), got %q", v)
	}
	_, p := splitOutputPath(o.OutputPath)
	o.OutputPath = datastorePath(ds, p)
	return nil
}

// setOutputDatastorePath is output_dataset.path: a path inside the datastore
// output_dataset.datastore_id names (workspaceblobstore when none does).
func setOutputDatastorePath(o *BatchOverrides, v string) error {
	p := strings.TrimPrefix(v, "/")
	if p == "" {
		return fmt.Errorf("expected a path inside the datastore, got %q", v)
	}
	ds, _ := splitOutputPath(o.OutputPath)
	o.OutputPath = datastorePath(ds, p)
	return nil
}

const datastoresPrefix = "azureml://datastores/"

// splitOutputPath reads azureml://datastores/<ds>/paths/<p>; anything else is
// workspaceblobstore with no path yet.
func splitOutputPath(s string) (ds, p string) {
	rest, ok := strings.CutPrefix(s, datastoresPrefix)
	if !ok {
		return "workspaceblobstore", ""
	}
	ds, p, _ = strings.Cut(rest, "/paths/")
	return ds, p
}

func datastorePath(ds, p string) string {
	return datastoresPrefix + ds + "/paths/" + p
}

// unquote removes one pair of quotes around a --set value, as a YAML scalar reads.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
