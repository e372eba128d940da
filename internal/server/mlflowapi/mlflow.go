package mlflowapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// The MLflow tracking REST API (docs/mlflow.md): MLflow 2.0 paths, JSON as MLflow's protos
// define it, errors in MLflow's shape (mlflowauth.go), so that MLflow's clients log to Hangar
// unchanged. An MLflow run is a Hangar run: run_id is the run's name.

const Prefix = "/api/2.0/mlflow/"

// mlflowRoutes registers the tracking API on mux.
func (s *API) mlflowRoutes(mux Mux) {
	// A job's script logs with its run's token: it may create an experiment (set_experiment
	// creates a missing one), read experiments, and read and write its own run (allowRun);
	// searching, creating runs and changing experiments take a user's token.
	get := func(path string, a Access, h http.HandlerFunc) { mux.Handle("GET "+Prefix+path, a, h) }
	post := func(path string, a Access, h http.HandlerFunc) { mux.Handle("POST "+Prefix+path, a, h) }
	run, own := readOrRunAccess, contributeOrRunAccess

	post("experiments/create", own, s.mlflowCreateExperiment)
	get("experiments/get", run, s.mlflowGetExperiment)
	get("experiments/get-by-name", run, s.mlflowGetExperimentByName)
	get("experiments/search", readAccess, s.mlflowSearchExperiments)
	post("experiments/search", readAccess, s.mlflowSearchExperiments)
	get("experiments/list", readAccess, s.mlflowSearchExperiments) // MLflow 1.x, still used by old clients
	post("experiments/update", contributeAccess, s.mlflowUpdateExperiment)
	post("experiments/delete", contributeAccess.audited("experiment.delete"), s.mlflowExperimentStage("deleted"))
	post("experiments/restore", contributeAccess, s.mlflowExperimentStage("active"))
	post("experiments/set-experiment-tag", contributeAccess, s.mlflowSetExperimentTag)

	post("runs/create", contributeAccess, s.mlflowCreateRun)
	get("runs/get", run, s.mlflowGetRun)
	post("runs/update", own, s.mlflowUpdateRun)
	post("runs/delete", own, s.mlflowRunStage("deleted"))
	post("runs/restore", own, s.mlflowRunStage("active"))
	post("runs/search", readAccess, s.mlflowSearchRuns)
	post("runs/log-metric", own, s.mlflowLogMetric)
	post("runs/log-parameter", own, s.mlflowLogParam)
	post("runs/set-tag", own, s.mlflowSetTag)
	post("runs/delete-tag", own, s.mlflowDeleteTag)
	post("runs/log-batch", own, s.mlflowLogBatch)
	post("runs/log-inputs", own, s.mlflowLogInputs)
	post("runs/log-model", own, s.mlflowLogModel)
	get("metrics/get-history", run, s.mlflowMetricHistory)

}

// mlflowHandler decodes an In (from the query of a GET, the JSON body of a POST), lets fn
// answer it, and writes the answer or the error in MLflow's shape.
func mlflowHandler[In any](s *API, fn func(r *http.Request, in *In) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		out, err := any(nil), s.decodeMLflow(r, &in)
		if err == nil {
			out, err = fn(r, &in)
		}
		if err != nil {
			s.writeError(w, s.mlflowErr(err))
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// runHandler is mlflowHandler for a request about one run (its In names it, as runRef does):
// fn gets the run's id once the caller's right to the run is checked.
func runHandler[In interface {
	id(s *API, r *http.Request) (string, error)
}](s *API, fn func(r *http.Request, id string, in *In) (any, error)) http.HandlerFunc {
	return mlflowHandler(s, func(r *http.Request, in *In) (any, error) {
		id, err := (*in).id(s, r)
		if err != nil {
			return nil, err
		}
		return fn(r, id, in)
	})
}

// workspaceHandler is mlflowHandler for what no run token may do (workspaceOnly).
func workspaceHandler[In any](s *API, fn func(r *http.Request, in *In) (any, error)) http.HandlerFunc {
	return mlflowHandler(s, func(r *http.Request, in *In) (any, error) {
		if err := s.workspaceOnly(r); err != nil {
			return nil, err
		}
		return fn(r, in)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// repeatedFields are the fields of MLflow's GET requests that may be given more than once.
var repeatedFields = map[string]bool{"order_by": true, "experiment_ids": true, "stages": true}

func (s *API) decodeMLflow(r *http.Request, v any) error {
	// A DELETE without a body takes its fields from the query: MLflow's Python client sends a
	// JSON body, the npm client (and curl users) the query.
	if r.Method == http.MethodGet || r.Method == http.MethodDelete && r.ContentLength == 0 && r.Body == http.NoBody {
		m := map[string]any{}
		for k, vs := range r.URL.Query() {
			if repeatedFields[k] {
				m[k] = vs
			} else {
				m[k] = vs[0]
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		return mlflowUnmarshal(b, v)
	}
	if r.ContentLength == 0 && r.Body == http.NoBody {
		return nil
	}
	var raw json.RawMessage
	if err := s.cfg.Bodies.ReadJSON(r, &raw); err != nil {
		return err
	}
	if len(raw) == 0 {
		return nil
	}
	return mlflowUnmarshal(raw, v)
}

func mlflowUnmarshal(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return mlflowInvalid(fmt.Sprintf("Invalid value for parameter '%s': expected %s, got %s", te.Field, te.Type, te.Value))
		}
		return mlflowInvalid("malformed JSON body: " + err.Error())
	}
	return nil
}

// mlflowErr turns the errors of the store and of the tracking model into MLflow's: the
// store's messages are MLflow's own, without the Go error's suffix.
func (s *API) mlflowErr(err error) error {
	var te *tracking.Error
	var ce *controller.Error
	switch {
	case errors.As(err, &te):
		return mlflowInvalid(te.Message)
	case errors.As(err, &ce) && errors.Is(err, store.ErrExists):
		// A taken name is MLflow's RESOURCE_ALREADY_EXISTS (400), which register_model expects.
		return &Error{Status: http.StatusBadRequest, Code: CodeAlreadyExists, Message: ce.Msg}
	case errors.As(err, &ce) && ce.Kind == controller.Conflict:
		return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: ce.Msg}
	case errors.As(err, &ce) && ce.Kind == controller.Invalid:
		return mlflowInvalid(ce.Msg)
	case errors.As(err, &ce) && ce.Kind == controller.NotFound:
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: ce.Msg}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: strings.TrimSuffix(err.Error(), ": "+store.ErrNotFound.Error())}
	case errors.Is(err, store.ErrExists):
		return &Error{Status: http.StatusBadRequest, Code: CodeAlreadyExists, Message: strings.TrimSuffix(err.Error(), ": "+store.ErrExists.Error())}
	}
	if st, msg, ok := s.cfg.Bodies.RequestError(err); ok && st < 500 {
		return &Error{Status: st, Code: codeOf(st), Message: msg}
	}
	return err
}

func required(field, v string) error {
	if v == "" {
		return mlflowInvalid(fmt.Sprintf("Missing value for required parameter '%s'. See the API docs for more information about request parameters.", field))
	}
	return nil
}

// jsonInt is an int64 as MLflow's JSON carries it: a number, or a string (protobuf's JSON form
// of int64, and every value of a GET's query).
type jsonInt int64

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int64(f)) {
			return mlflowInvalid(fmt.Sprintf("Invalid value %s: expected an integer", b))
		}
		v = int64(f)
	}
	*n = jsonInt(v)
	return nil
}

// jsonFloat is a double as MLflow's JSON carries it: a number or a string.
type jsonFloat float64

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return mlflowInvalid(fmt.Sprintf("Invalid value %s: expected a number", b))
	}
	*f = jsonFloat(v)
	return nil
}

// viewType is a ViewType given as its name or its number.
type viewType string

func (v *viewType) UnmarshalJSON(b []byte) error {
	*v = viewType(strings.Trim(string(b), `"`))
	return nil
}

// empty is MLflow's answer to a request that returns nothing.
type empty struct{}
