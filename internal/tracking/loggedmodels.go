package tracking

import (
	"cmp"
	"slices"
	"strings"
)

// MLflow 3's logged models (docs/mlflow.md "Logged models"): a model with its own id
// (m-<32 hex>), params, tags, metrics and files, usually made by a run (its source run).
// search_logged_models filters and orders them in memory, as the registry's searches do.

// Logged model statuses: MLflow's LoggedModelStatus names, by number.
var loggedModelStatuses = []string{"LOGGED_MODEL_STATUS_UNSPECIFIED", "LOGGED_MODEL_PENDING", "LOGGED_MODEL_READY", "LOGGED_MODEL_UPLOAD_FAILED"}

// Logged model statuses as stored.
const (
	LoggedModelPending      = 1
	LoggedModelReady        = 2
	LoggedModelUploadFailed = 3
)

// LoggedModelStatusName is status's enum name ("LOGGED_MODEL_READY").
func LoggedModelStatusName(status int) string {
	if status < 0 || status >= len(loggedModelStatuses) {
		return loggedModelStatuses[0]
	}
	return loggedModelStatuses[status]
}

// LoggedModelStatusOf reads a status given by its name or its number ("LOGGED_MODEL_READY",
// "2"); ok is false for anything else.
func LoggedModelStatusOf(s string) (int, bool) {
	for i, n := range loggedModelStatuses {
		if s == n || s == string(rune('0'+i)) {
			return i, true
		}
	}
	return 0, false
}

// LoggedModel is MLflow's LoggedModel.
type LoggedModel struct {
	Info LoggedModelInfo `json:"info"`
	Data LoggedModelData `json:"data"`
}

// LoggedModelInfo is MLflow's LoggedModelInfo.
type LoggedModelInfo struct {
	ModelID                string `json:"model_id"`
	ExperimentID           string `json:"experiment_id"`
	Name                   string `json:"name"`
	CreationTimestampMs    int64  `json:"creation_timestamp_ms"`
	LastUpdatedTimestampMs int64  `json:"last_updated_timestamp_ms"`
	ArtifactURI            string `json:"artifact_uri"`
	Status                 string `json:"status"`
	ModelType              string `json:"model_type,omitempty"`
	SourceRunID            string `json:"source_run_id,omitempty"`
	StatusMessage          string `json:"status_message,omitempty"`
	Tags                   []KV   `json:"tags,omitempty"`
}

// LoggedModelData is MLflow's LoggedModelData: params and the metric points linked to the model.
type LoggedModelData struct {
	Params  []KV          `json:"params,omitempty"`
	Metrics []ModelMetric `json:"metrics,omitempty"`
}

// ModelMetric is MLflow's Metric with the fields of a point linked to a model.
type ModelMetric struct {
	Key           string  `json:"key"`
	Value         float64 `json:"value"`
	Timestamp     int64   `json:"timestamp"`
	Step          int64   `json:"step"`
	DatasetName   string  `json:"dataset_name,omitempty"`
	DatasetDigest string  `json:"dataset_digest,omitempty"`
	ModelID       string  `json:"model_id,omitempty"`
	RunID         string  `json:"run_id,omitempty"`
}

// ModelIO is MLflow's ModelInput and ModelOutput: a model a run used or produced (at a step).
type ModelIO struct {
	ModelID string `json:"model_id"`
	Step    *int64 `json:"step,omitempty"`
}

// LoggedModelArtifactURI is where a logged model's files are: the experiment's artifact root,
// models/<id>/artifacts (what MLflow's server answers), served by the artifact proxy.
func LoggedModelArtifactURI(experimentID, modelID string) string {
	return "mlflow-artifacts:/" + experimentID + "/models/" + modelID + "/artifacts"
}

// Attributes of a logged model that a filter or an order names; the numeric ones compare
// numbers (times in milliseconds). MLflow takes *_time as the *_timestamp.
var (
	loggedModelStringAttrs  = []string{"name", "model_id", "model_type", "status", "source_run_id"}
	loggedModelNumericAttrs = []string{"creation_timestamp", "last_updated_timestamp"}
	loggedModelAttrAliases  = map[string]string{"creation_time": "creation_timestamp", "last_updated_time": "last_updated_timestamp"}
	loggedModelEntities     = map[string]Entity{"attributes": Attribute, "metrics": Metric, "params": Param, "tags": Tag}
)

// ParseLoggedModelFilter parses a search_logged_models filter, e.g.
// "name = 'model' AND metrics.acc > 0.9 AND params.lr = '0.1' AND status = 'LOGGED_MODEL_READY'".
func ParseLoggedModelFilter(s string) (Filter, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	return parse(s, toks, loggedModelIdentifier)
}

func loggedModelIdentifier(s string) (Clause, error) {
	ent, key, ok := strings.Cut(s, ".")
	e := Attribute
	if ok {
		var known bool
		if e, known = loggedModelEntities[ent]; !known {
			return Clause{}, invalidf("Invalid entity type: '%s'. Expected one of ['attributes', 'metrics', 'params', 'tags'].", ent)
		}
	} else {
		key = s
	}
	key = unquoteKey(key)
	if a, ok := loggedModelAttrAliases[key]; ok && e == Attribute {
		key = a
	}
	switch {
	case key == "":
		return Clause{}, invalidf("Invalid identifier '%s': the key is empty", s)
	case e == Attribute && !contains(loggedModelStringAttrs, key) && !contains(loggedModelNumericAttrs, key):
		return Clause{}, invalidf("Invalid attribute key '%s' specified. Valid keys are '%s'", key, append(append([]string{}, loggedModelStringAttrs...), loggedModelNumericAttrs...))
	}
	return Clause{Entity: e, Key: key}, nil
}

// DatasetRef is a dataset a search's metric clauses and orders are restricted to: its name, and
// its digest when given.
type DatasetRef struct {
	Name   string `json:"dataset_name"`
	Digest string `json:"dataset_digest,omitempty"`
}

func (d DatasetRef) holds(m ModelMetric) bool {
	return m.DatasetName == d.Name && (d.Digest == "" || m.DatasetDigest == d.Digest)
}

// LatestMetric is the model's latest point of key (the highest step, then the latest
// timestamp) among the datasets given (any when none are).
func (m *LoggedModel) LatestMetric(key string, datasets []DatasetRef) (float64, bool) {
	var best *ModelMetric
	for i, p := range m.Data.Metrics {
		if p.Key != key || len(datasets) > 0 && !slices.ContainsFunc(datasets, func(d DatasetRef) bool { return d.holds(p) }) {
			continue
		}
		if best == nil || p.Step > best.Step || p.Step == best.Step && p.Timestamp >= best.Timestamp {
			best = &m.Data.Metrics[i]
		}
	}
	if best == nil {
		return 0, false
	}
	return best.Value, true
}

func (m *LoggedModel) attr(key string) (string, float64) {
	i := m.Info
	switch key {
	case "name":
		return i.Name, 0
	case "model_id":
		return i.ModelID, 0
	case "model_type":
		return i.ModelType, 0
	case "status":
		return i.Status, 0
	case "source_run_id":
		return i.SourceRunID, 0
	case "creation_timestamp":
		return "", float64(i.CreationTimestampMs)
	}
	return "", float64(i.LastUpdatedTimestampMs)
}

func kvValue(kvs []KV, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// MatchLoggedModel says whether m holds every clause of f; a metric, param or tag clause needs
// the value. A status compares by its name, with or without LOGGED_MODEL_.
func (f Filter) MatchLoggedModel(m *LoggedModel, datasets []DatasetRef) bool {
	for _, c := range f {
		var ok bool
		switch c.Entity {
		case Metric:
			v, has := m.LatestMetric(c.Key, datasets)
			ok = has && matchNumber(v, c)
		case Param, Tag:
			kvs := m.Data.Params
			if c.Entity == Tag {
				kvs = m.Info.Tags
			}
			v, has := kvValue(kvs, c.Key)
			ok = has && matchString(v, c)
		default:
			s, n := m.attr(c.Key)
			switch {
			case c.Numeric():
				ok = matchNumber(n, c)
			case c.Key == "status":
				ok = matchString(s, c) || matchString(strings.TrimPrefix(s, "LOGGED_MODEL_"), c)
			default:
				ok = matchString(s, c) || c.Op == "NOT IN" && !slices.Contains(c.List, s)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// LoggedModelOrder is one term of search_logged_models' order_by.
type LoggedModelOrder struct {
	FieldName string `json:"field_name"`
	Ascending *bool  `json:"ascending"`
	// DatasetName and DatasetDigest restrict a metric's value to one dataset.
	DatasetName   string `json:"dataset_name"`
	DatasetDigest string `json:"dataset_digest"`
}

// ParseLoggedModelOrder checks order_by terms: an attribute (name, model_id, status, ...,
// creation_timestamp) or metrics.<key>. The default is creation_timestamp DESC; ties go by
// model id.
func ParseLoggedModelOrder(terms []LoggedModelOrder) ([]OrderBy, error) {
	if len(terms) > MaxOrderBy {
		return nil, invalidf("order_by may hold at most %d terms, got %d", MaxOrderBy, len(terms))
	}
	var out []OrderBy
	for _, t := range terms {
		c, err := loggedModelIdentifier(t.FieldName)
		if err != nil {
			return nil, err
		}
		if c.Entity != Attribute && c.Entity != Metric {
			return nil, invalidf("Invalid order_by field '%s': order by an attribute or metrics.<key>", t.FieldName)
		}
		out = append(out, OrderBy{Entity: c.Entity, Key: c.Key, Desc: t.Ascending != nil && !*t.Ascending})
	}
	if len(out) == 0 {
		out = []OrderBy{{Entity: Attribute, Key: "creation_timestamp", Desc: true}}
	}
	return withTieBreaks(out, OrderBy{Entity: Attribute, Key: "model_id"}), nil
}

// SortLoggedModels sorts ms by the order's terms; a model without a metric comes last in either
// direction (terms[i]'s metric is read within datasets[i], when given).
func SortLoggedModels(ms []*LoggedModel, order []OrderBy, datasets [][]DatasetRef) {
	slices.SortStableFunc(ms, func(a, b *LoggedModel) int {
		for i, o := range order {
			var ds []DatasetRef
			if i < len(datasets) {
				ds = datasets[i]
			}
			if c := compareLoggedModels(a, b, o, ds); c != 0 {
				return c
			}
		}
		return 0
	})
}

func compareLoggedModels(a, b *LoggedModel, o OrderBy, ds []DatasetRef) int {
	sign := 1
	if o.Desc {
		sign = -1
	}
	if o.Entity == Metric {
		va, oka := a.LatestMetric(o.Key, ds)
		vb, okb := b.LatestMetric(o.Key, ds)
		switch {
		case oka != okb && oka:
			return -1
		case oka != okb:
			return 1
		}
		return sign * cmp.Compare(va, vb)
	}
	sa, na := a.attr(o.Key)
	sb, nb := b.attr(o.Key)
	if contains(loggedModelNumericAttrs, o.Key) {
		return sign * cmp.Compare(na, nb)
	}
	return sign * cmp.Compare(sa, sb)
}
