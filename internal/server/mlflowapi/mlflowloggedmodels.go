package mlflowapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// MLflow 3's logged models (docs/mlflow.md "Logged models"): what log_model creates, uploads to,
// finalizes and registers from. A model is kept with its source run; a run's token reaches the
// models of its own run only (allowModel), every user reads them, owners and contributors
// write them.

const loggedModelsPrefix = Prefix + "logged-models"

// loggedModels serves the logged-models routes: a type of its own beside API (whose method set
// stays the tracking API's), over the same configuration.
type loggedModels struct {
	api *API
	cfg Config
}

func (s *loggedModels) routes(mux Mux) {
	handle := func(method, path string, a Access, h http.HandlerFunc) {
		mux.Handle(method+" "+loggedModelsPrefix+path, a, h)
	}
	run, own := readOrRunAccess, contributeOrRunAccess
	handle("POST", "", own, mlflowHandler(s.api, s.createLoggedModel))
	handle("GET", "/{model_id}", run, mlflowHandler(s.api, s.getLoggedModel))
	handle("PATCH", "/{model_id}", own, mlflowHandler(s.api, s.finalizeLoggedModel))
	handle("DELETE", "/{model_id}", own, mlflowHandler(s.api, s.deleteLoggedModel))
	handle("POST", "/search", run, mlflowHandler(s.api, s.searchLoggedModels))
	handle("PATCH", "/{model_id}/tags", own, mlflowHandler(s.api, s.setLoggedModelTags))
	handle("DELETE", "/{model_id}/tags/{key...}", own, mlflowHandler(s.api, s.deleteLoggedModelTag))
	handle("POST", "/{model_id}/params", own, mlflowHandler(s.api, s.logLoggedModelParams))
	handle("GET", "/{model_id}/artifacts/directories", run, s.listLoggedModelArtifacts)
	handle("GET", "/{model_id}/artifacts/files", run, s.getLoggedModelArtifact)
	mux.Handle("POST "+Prefix+"runs/outputs", own, s.mlflowLogOutputs)
}

type loggedModelAnswer struct {
	Model *tracking.LoggedModel `json:"model"`
}

type loggedModelCreateIn struct {
	ExperimentID string        `json:"experiment_id"`
	Name         string        `json:"name"`
	ModelType    string        `json:"model_type"`
	SourceRunID  string        `json:"source_run_id"`
	Params       []tracking.KV `json:"params"`
	Tags         []tracking.KV `json:"tags"`
}

// createLoggedModel makes a PENDING model. A run's token creates models of its own run: one
// created without source_run_id is its run's.
func (s *loggedModels) createLoggedModel(r *http.Request, in *loggedModelCreateIn) (any, error) {
	if err := required("experiment_id", in.ExperimentID); err != nil {
		return nil, err
	}
	if c := s.cfg.Caller(r); !c.Admin && in.SourceRunID == "" {
		in.SourceRunID = c.RunID
	}
	if in.SourceRunID != "" {
		if err := s.api.allowRun(r, in.SourceRunID); err != nil {
			return nil, err
		}
	}
	if err := checkModelKVs(in.Params, in.Tags); err != nil {
		return nil, err
	}
	id := newLoggedModelID()
	if in.Name == "" {
		in.Name = "model-" + id[2:10]
	}
	m := &tracking.LoggedModel{
		Info: tracking.LoggedModelInfo{ModelID: id, ExperimentID: in.ExperimentID, Name: in.Name, ModelType: in.ModelType,
			SourceRunID: in.SourceRunID, Status: tracking.LoggedModelStatusName(tracking.LoggedModelPending), Tags: in.Tags},
		Data: tracking.LoggedModelData{Params: in.Params},
	}
	if err := s.cfg.LoggedModels.CreateLoggedModel(r.Context(), m, time.Now()); err != nil {
		return nil, err
	}
	got, err := s.cfg.LoggedModels.LoggedModel(r.Context(), id)
	return loggedModelAnswer{Model: got}, err
}

// newLoggedModelID is MLflow's model id: m- and 32 hex digits.
func newLoggedModelID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "m-" + hex.EncodeToString(b)
}

// checkModelKVs checks params and tags as a run's are checked.
func checkModelKVs(params, tags []tracking.KV) error {
	for _, p := range params {
		if err := tracking.CheckParam(p.Key, p.Value); err != nil {
			return err
		}
	}
	for _, t := range tags {
		if err := tracking.CheckTag(t.Key, t.Value); err != nil {
			return err
		}
	}
	return nil
}

type modelIDIn struct {
	ModelID string `json:"model_id"`
}

func (s *loggedModels) getLoggedModel(r *http.Request, _ *modelIDIn) (any, error) {
	m, err := s.api.loggedModel(r, r.PathValue("model_id"))
	return loggedModelAnswer{Model: m}, err
}

// enumName is an enum field given by its name or its number.
type enumName string

func (e *enumName) UnmarshalJSON(b []byte) error {
	*e = enumName(strings.Trim(string(b), `"`))
	return nil
}

// finalizeLoggedModel sets the status log_model ends with: LOGGED_MODEL_READY, or
// LOGGED_MODEL_UPLOAD_FAILED.
func (s *loggedModels) finalizeLoggedModel(r *http.Request, in *struct {
	Status enumName `json:"status"`
}) (any, error) {
	m, err := s.api.loggedModel(r, r.PathValue("model_id"))
	if err != nil {
		return nil, err
	}
	if err := required("status", string(in.Status)); err != nil {
		return nil, err
	}
	st, ok := tracking.LoggedModelStatusOf(string(in.Status))
	if !ok || st == 0 {
		return nil, mlflowInvalid(fmt.Sprintf("Invalid value '%s' for parameter 'status': want LOGGED_MODEL_READY, LOGGED_MODEL_UPLOAD_FAILED or LOGGED_MODEL_PENDING", in.Status))
	}
	if err := s.cfg.LoggedModels.SetLoggedModelStatus(r.Context(), m.Info.ModelID, st, ""); err != nil {
		return nil, err
	}
	m, err = s.cfg.LoggedModels.LoggedModel(r.Context(), m.Info.ModelID)
	return loggedModelAnswer{Model: m}, err
}

func (s *loggedModels) deleteLoggedModel(r *http.Request, _ *modelIDIn) (any, error) {
	m, err := s.api.loggedModel(r, r.PathValue("model_id"))
	if err != nil {
		return nil, err
	}
	return empty{}, s.cfg.LoggedModels.DeleteLoggedModel(r.Context(), m.Info.ModelID)
}

func (s *loggedModels) setLoggedModelTags(r *http.Request, in *struct {
	Tags []tracking.KV `json:"tags"`
}) (any, error) {
	m, err := s.api.loggedModel(r, r.PathValue("model_id"))
	if err == nil {
		err = checkModelKVs(nil, in.Tags)
	}
	if err != nil {
		return nil, err
	}
	return empty{}, s.cfg.LoggedModels.SetLoggedModelTags(r.Context(), m.Info.ModelID, in.Tags)
}

func (s *loggedModels) deleteLoggedModelTag(r *http.Request, _ *modelIDIn) (any, error) {
	m, err := s.api.loggedModel(r, r.PathValue("model_id"))
	if err != nil {
		return nil, err
	}
	return empty{}, s.cfg.LoggedModels.DeleteLoggedModelTag(r.Context(), m.Info.ModelID, r.PathValue("key"))
}

func (s *loggedModels) logLoggedModelParams(r *http.Request, in *struct {
	Params []tracking.KV `json:"params"`
}) (any, error) {
	m, err := s.api.loggedModel(r, r.PathValue("model_id"))
	if err == nil {
		err = checkModelKVs(in.Params, nil)
	}
	if err != nil {
		return nil, err
	}
	return empty{}, s.cfg.LoggedModels.LogLoggedModelParams(r.Context(), m.Info.ModelID, in.Params)
}

// mlflowLogOutputs records the models a run produced (log_model calls it after creating one),
// which runs/get answers as outputs.model_outputs. A run's token names its own run's models.
func (s *loggedModels) mlflowLogOutputs(w http.ResponseWriter, r *http.Request) {
	type in struct {
		runRef
		Models []tracking.ModelIO `json:"models"`
	}
	runHandler(s.api, func(r *http.Request, id string, in *in) (any, error) {
		for _, m := range in.Models {
			if _, err := s.api.loggedModel(r, m.ModelID); err != nil {
				return nil, err
			}
		}
		return empty{}, s.cfg.LoggedModels.LogRunModels(r.Context(), id, store.ModelOutput, in.Models)
	})(w, r)
}
