package tracking

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// MLflow's limits (mlflow/utils/validation.py, MLflow 2.x).
const (
	MaxMetricsPerBatch    = 1000
	MaxParamsTagsPerBatch = 100
	MaxEntitiesPerBatch   = 1000
	MaxEntityKeyLength    = 250
	MaxParamValueLength   = 6000
	MaxTagValueLength     = 8000
	MaxExperimentTagKey   = 250
	MaxExperimentTagValue = 5000
	MaxDatasetNameSize    = 500
	MaxDatasetDigestSize  = 36
	MaxDatasetSchemaSize  = 1048575
	MaxDatasetSourceSize  = 65535
	MaxDatasetsPerInputs  = 1000

	DefaultSearchResults = 1000
	MaxSearchResults     = 50000
	// MaxSearchExperiments is what one search_experiments page may hold.
	MaxSearchExperiments = 50000
	// MaxHistoryPage is a get-history page (MLflow answers up to 25,000 points a page).
	MaxHistoryPage = 25000
	// MaxSearchIDs bounds experiment_ids of a search and the values of an IN list.
	MaxSearchIDs = 1000
)

var validName = regexp.MustCompile(`^[/\w.\- ]*$`)

// CheckKey validates a metric, param or tag key as MLflow does (what may name a file).
func CheckKey(kind, key string) error {
	if key == "" {
		return invalidf("Missing value for required parameter 'key'. See the API docs for more information about request parameters.")
	}
	if !validName.MatchString(key) {
		return invalidf("Invalid %s name: '%s'. Names may only contain alphanumerics, underscores (_), dashes (-), periods (.), spaces ( ), and slashes (/).", kind, key)
	}
	if strings.HasPrefix(key, "/") || strings.Contains(key, "..") || strings.Contains(key, "//") {
		return invalidf("Invalid %s name: '%s'. Names cannot contain '..', '//' or begin with '/'.", kind, key)
	}
	if len(key) > MaxEntityKeyLength {
		return invalidf("%s '%s' had length %d, which exceeded length limit of %d", capital(kind), key[:20]+"...", len(key), MaxEntityKeyLength)
	}
	return nil
}

func capital(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// CheckParam validates a param.
func CheckParam(key, value string) error {
	if err := CheckKey("param", key); err != nil {
		return err
	}
	if len(value) > MaxParamValueLength {
		return invalidf("Param value '%s...' had length %d, which exceeded length limit of %d", value[:20], len(value), MaxParamValueLength)
	}
	return nil
}

// CheckTag validates a run tag.
func CheckTag(key, value string) error {
	if err := CheckKey("tag", key); err != nil {
		return err
	}
	if len(value) > MaxTagValueLength {
		return invalidf("Tag value '%s...' had length %d, which exceeded length limit of %d", value[:20], len(value), MaxTagValueLength)
	}
	return nil
}

// CheckExperimentTag validates an experiment's tag.
func CheckExperimentTag(key, value string) error {
	if err := CheckKey("tag", key); err != nil {
		return err
	}
	if len(value) > MaxExperimentTagValue {
		return invalidf("Tag value '%s...' had length %d, which exceeded length limit of %d", value[:20], len(value), MaxExperimentTagValue)
	}
	return nil
}

// CheckMetric validates a metric point. NaN and infinities are stored as MLflow stores them.
func CheckMetric(key string, value float64, timestamp int64) error {
	if err := CheckKey("metric", key); err != nil {
		return err
	}
	if timestamp < 0 {
		return invalidf("Got invalid timestamp %d for metric '%s' (value=%v). Timestamp must be a nonnegative long (64-bit integer)", timestamp, key, value)
	}
	return nil
}

// CheckBatch applies log-batch's limits on its sizes.
func CheckBatch(metrics, params, tags int) error {
	switch {
	case metrics > MaxMetricsPerBatch:
		return invalidf("A batch logging request can contain at most %d metrics. Got %d metrics. Please split up metrics across multiple requests and try again.", MaxMetricsPerBatch, metrics)
	case params > MaxParamsTagsPerBatch:
		return invalidf("A batch logging request can contain at most %d params. Got %d params. Please split up params across multiple requests and try again.", MaxParamsTagsPerBatch, params)
	case tags > MaxParamsTagsPerBatch:
		return invalidf("A batch logging request can contain at most %d tags. Got %d tags. Please split up tags across multiple requests and try again.", MaxParamsTagsPerBatch, tags)
	case metrics+params+tags > MaxEntitiesPerBatch:
		return invalidf("A batch logging request can contain at most %d metrics, params, and tags in total. Got %d total entities. Please split up across multiple requests and try again.", MaxEntitiesPerBatch, metrics+params+tags)
	}
	return nil
}

// CheckMaxResults validates a search's max_results (0 means the default).
func CheckMaxResults(n, limit int) (int, error) {
	if n == 0 {
		return DefaultSearchResults, nil
	}
	if n < 0 || n > limit {
		return 0, invalidf("Invalid value %d for parameter 'max_results' supplied. It must be a positive integer at most %d", n, limit)
	}
	return n, nil
}

// CheckExperimentName validates a new experiment name.
func CheckExperimentName(name string) error {
	if name == "" {
		return invalidf("Invalid experiment name: '%s'", name)
	}
	if len(name) > 500 {
		return invalidf("Invalid experiment name: longer than 500 characters")
	}
	return nil
}

// A page token is MLflow's: the offset of the next page, as base64 of {"offset": n}.
type pageToken struct {
	Offset int `json:"offset"`
}

// PageToken returns the token of the page that starts at offset.
func PageToken(offset int) string {
	b, _ := json.Marshal(pageToken{Offset: offset})
	return base64.StdEncoding.EncodeToString(b)
}

// ParseToken returns the offset of a page token ("" is the first page).
func ParseToken(tok string) (int, error) {
	if tok == "" {
		return 0, nil
	}
	b, err := base64.StdEncoding.DecodeString(tok)
	if err != nil {
		return 0, invalidf("Invalid page token, could not base64-decode")
	}
	var p pageToken
	if err := json.Unmarshal(b, &p); err != nil {
		return 0, invalidf("Invalid page token, decoded value=%s", b)
	}
	if p.Offset < 0 {
		return 0, invalidf("Invalid page token, offset %d is negative", p.Offset)
	}
	return p.Offset, nil
}

// MLflow run statuses (RunStatus in MLflow's protos).
const (
	StatusRunning   = "RUNNING"
	StatusScheduled = "SCHEDULED"
	StatusFinished  = "FINISHED"
	StatusFailed    = "FAILED"
	StatusKilled    = "KILLED"
)

// StatusOf maps a Hangar state to MLflow's run status (the common brief of issue 12).
func StatusOf(s job.State) string {
	switch s {
	case job.Running, job.Finalizing, job.CancelRequested, job.NotResponding:
		return StatusRunning
	case job.Completed:
		return StatusFinished
	case job.Failed:
		return StatusFailed
	case job.Canceled:
		return StatusKilled
	}
	return StatusScheduled
}

// StateOf maps an MLflow status to the state a run that is not a job is stored in.
func StateOf(status string) (job.State, error) {
	switch status {
	case StatusRunning:
		return job.Running, nil
	case StatusScheduled:
		return job.Queued, nil
	case StatusFinished:
		return job.Completed, nil
	case StatusFailed:
		return job.Failed, nil
	case StatusKilled:
		return job.Canceled, nil
	}
	return "", invalidf("Invalid value \"%s\" for parameter 'status' supplied: not one of RUNNING, SCHEDULED, FINISHED, FAILED, KILLED", status)
}

// RunViewType selects runs or experiments by lifecycle stage (ViewType in MLflow's protos); it
// returns the stages selected.
func RunViewType(v string) ([]string, error) {
	switch v {
	case "", "ACTIVE_ONLY", "1":
		return []string{"active"}, nil
	case "DELETED_ONLY", "2":
		return []string{"deleted"}, nil
	case "ALL", "3":
		return []string{"active", "deleted"}, nil
	}
	return nil, invalidf("Invalid value \"%s\" for parameter 'run_view_type': not one of ACTIVE_ONLY, DELETED_ONLY, ALL", v)
}

// CheckDataset validates a dataset of log-inputs (MLflow's _validate_dataset).
func CheckDataset(d DatasetInput) error {
	ds := d.Dataset
	switch {
	case ds.Name == "" || ds.Digest == "" || ds.SourceType == "" || ds.Source == "":
		return invalidf("Dataset name, digest, source_type and source are required")
	case len(ds.Name) > MaxDatasetNameSize:
		return invalidf("Dataset name '%s...' exceeds the maximum length of %d", ds.Name[:20], MaxDatasetNameSize)
	case len(ds.Digest) > MaxDatasetDigestSize:
		return invalidf("Dataset digest '%s' exceeds the maximum length of %d", ds.Digest, MaxDatasetDigestSize)
	case len(ds.Schema) > MaxDatasetSchemaSize:
		return invalidf("Dataset schema exceeds the maximum length of %d", MaxDatasetSchemaSize)
	case len(ds.Source) > MaxDatasetSourceSize:
		return invalidf("Dataset source exceeds the maximum length of %d", MaxDatasetSourceSize)
	case len(d.Tags) > MaxParamsTagsPerBatch:
		return invalidf("A dataset input may have at most %d tags", MaxParamsTagsPerBatch)
	}
	for _, t := range d.Tags {
		if err := CheckTag(t.Key, t.Value); err != nil {
			return err
		}
	}
	return nil
}
