package mlflowapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// MLflow's model registry over Hangar's models (docs/mlflow.md "Model registry"): an MLflow
// registered model is a Hangar model name, a model version one of its versions whose version is
// an integer (MLflow's client reads versions as integers: 0.0.1 or v2 stay Azure's and Hangar's
// only). What `hangar model create` registers is what MLflow's clients see, and a version
// MLflow's client creates is made by the same workspace call (mlflowregistry_create.go).

// Models reads the workspace's model versions (deleted ones never), the names registered
// without one, their aliases and tags (the store's assets aggregate).
type Models interface {
	Models(ctx context.Context, name string) ([]model.Version, error)
	RegisteredModels(ctx context.Context, name string) ([]store.RegisteredModel, error)
	ModelAliases(ctx context.Context, name string) ([]store.ModelAlias, error)
	RegisteredModelTags(ctx context.Context, name string) ([]store.RegisteredModelTag, error)
}

// Registry makes every registry write: the workspace's models (workspace.Models), their one
// writer, which `hangar model create` and the model routes call too. It checks what it is
// given by MLflow's rules and answers MLflow's words (workspace errors).
type Registry interface {
	Create(ctx context.Context, req api.CreateModelRequest) (*model.Version, error)
	CreateRegistered(ctx context.Context, name, description string, tags map[string]string) error
	DescribeRegistered(ctx context.Context, name, description string) error
	SetRegisteredTag(ctx context.Context, name, key, value string) error
	DeleteRegisteredTag(ctx context.Context, name, key string) error
	DescribeVersion(ctx context.Context, name, version, description string) (*model.Version, error)
	SetVersionTag(ctx context.Context, name, version, key, value string) (*model.Version, error)
	DeleteVersionTag(ctx context.Context, name, version, key string) (*model.Version, error)
	SetAlias(ctx context.Context, name, alias, version string) (*model.Version, error)
	DeleteAlias(ctx context.Context, name, alias string) error
	TransitionStage(ctx context.Context, name, version, stage string, archiveOthers bool) (*model.Version, error)
	Rename(ctx context.Context, from, to string) error
	Delete(ctx context.Context, name, version string) error
}

// MLflow's registry limits (mlflow/store/model_registry/__init__.py).
const (
	defaultRegisteredModels = 100
	maxRegisteredModels     = 1000
	defaultModelVersions    = 10_000
	maxModelVersions        = 200_000
)

// registry serves MLflow's model registry routes: a type of its own beside API (whose method
// set stays the tracking API's), over the same configuration.
type registry struct {
	api *API
	cfg Config
}

// registryRoutes registers the registry's reads: every role, and a run's token (a job's script
// resolves models:/ URIs and waits on a version it registered elsewhere).
func (s *registry) registryRoutes(mux Mux) {
	get := func(path string, h http.HandlerFunc) { mux.Handle("GET "+Prefix+path, readOrRunAccess, h) }
	get("registered-models/get", mlflowHandler(s.api, s.getRegisteredModel))
	get("registered-models/search", mlflowHandler(s.api, s.searchRegisteredModels))
	get("registered-models/get-latest-versions", mlflowHandler(s.api, s.latestVersions))
	// MLflow's client POSTs get-latest-versions first; a read all the same.
	mux.Handle("POST "+Prefix+"registered-models/get-latest-versions", readOrRunAccess, mlflowHandler(s.api, s.latestVersions))
	get("model-versions/get", mlflowHandler(s.api, s.getModelVersion))
	get("model-versions/search", mlflowHandler(s.api, s.searchModelVersions))
}

type registeredModelJSON struct {
	Name                 string             `json:"name"`
	CreationTimestamp    int64              `json:"creation_timestamp"`
	LastUpdatedTimestamp int64              `json:"last_updated_timestamp"`
	Description          string             `json:"description,omitempty"`
	LatestVersions       []modelVersionJSON `json:"latest_versions,omitempty"`
	Tags                 []tracking.KV      `json:"tags,omitempty"`
	Aliases              []aliasJSON        `json:"aliases,omitempty"`
}

type aliasJSON struct {
	Alias   string `json:"alias"`
	Version string `json:"version"`
}

type modelVersionJSON struct {
	Name                 string `json:"name"`
	Version              string `json:"version"`
	CreationTimestamp    int64  `json:"creation_timestamp"`
	LastUpdatedTimestamp int64  `json:"last_updated_timestamp"`
	CurrentStage         string `json:"current_stage"`
	Description          string `json:"description,omitempty"`
	Source               string `json:"source"`
	RunID                string `json:"run_id,omitempty"`
	// Status is always READY: an omitted status reads as PENDING_REGISTRATION, on which MLflow's
	// client waits five minutes.
	Status  string        `json:"status"`
	Tags    []tracking.KV `json:"tags,omitempty"`
	Aliases []string      `json:"aliases,omitempty"`
}

// registered is one model name's versions that MLflow sees, oldest first, and its row when it
// was registered through MLflow.
type registered struct {
	name     string
	versions []model.Version
	row      *store.RegisteredModel
	aliases  []store.ModelAlias
	tags     map[string]string
	// first and last are its versions' creation times, every version counted (ms).
	first, last int64
	// loggedRuns are the source runs of the logged models its versions were registered from
	// (models:/m-<id>), by model id: such a version's run_id.
	loggedRuns map[string]string
}

// versionJSON is v as MLflow shows it, with the aliases that name it.
func (m registered) versionJSON(v model.Version) modelVersionJSON {
	j := versionJSON(v)
	if id, ok := loggedModelOf(v); ok {
		j.RunID = m.loggedRuns[id]
	}
	for _, a := range m.aliases {
		if a.Version == v.Version {
			j.Aliases = append(j.Aliases, a.Alias)
		}
	}
	return j
}

func (m registered) json() registeredModelJSON {
	out := registeredModelJSON{Name: m.name, CreationTimestamp: m.first, LastUpdatedTimestamp: m.last}
	if m.row != nil {
		out.Description = m.row.Description
		if c := m.row.Created.UnixMilli(); out.CreationTimestamp == 0 || c < out.CreationTimestamp {
			out.CreationTimestamp = c
		}
		out.LastUpdatedTimestamp = max(out.LastUpdatedTimestamp, out.CreationTimestamp)
	}
	latest := map[string]model.Version{}
	for _, v := range m.versions {
		if l, ok := latest[stage(v)]; !ok || model.Number(v.Version) > model.Number(l.Version) {
			latest[stage(v)] = v
		}
	}
	for _, a := range m.aliases {
		out.Aliases = append(out.Aliases, aliasJSON{Alias: a.Alias, Version: a.Version})
	}
	for _, k := range slices.Sorted(maps.Keys(m.tags)) {
		out.Tags = append(out.Tags, tracking.KV{Key: k, Value: m.tags[k]})
	}
	for _, st := range model.Stages {
		if v, ok := latest[st]; ok {
			out.LatestVersions = append(out.LatestVersions, m.versionJSON(v))
		}
	}
	return out
}

func (m registered) match(f tracking.Filter) bool {
	return f.Match(tracking.Registered{Attrs: map[string]string{"name": m.name}, Tags: m.tags})
}

func millis(v model.Version) int64 { return v.CreatedAt.UnixMilli() }

// stage is the MLflow stage of a version: Hangar's archived versions are Archived, the others
// their MLflowStage (Staging, Production) or None.
func stage(v model.Version) string { return v.RegistryStage() }

// runOf is the run a version was registered from (azureml://jobs/<run>/outputs/...).
func runOf(v model.Version) string {
	rest, ok := strings.CutPrefix(v.Source, "azureml://jobs/")
	if !ok {
		return ""
	}
	run, _, _ := strings.Cut(rest, "/")
	return run
}

func versionJSON(v model.Version) modelVersionJSON {
	out := modelVersionJSON{Name: v.Name, Version: v.Version, CreationTimestamp: millis(v), LastUpdatedTimestamp: millis(v),
		CurrentStage: stage(v), Description: v.Description, Source: v.Source, RunID: runOf(v), Status: "READY"}
	for _, k := range slices.Sorted(maps.Keys(v.Tags)) {
		out.Tags = append(out.Tags, tracking.KV{Key: k, Value: v.Tags[k]})
	}
	return out
}

func (v modelVersionJSON) filterable(num int64) tracking.Registered {
	tags := map[string]string{}
	for _, t := range v.Tags {
		tags[t.Key] = t.Value
	}
	return tracking.Registered{Attrs: map[string]string{"name": v.Name, "run_id": v.RunID, "source_path": v.Source},
		Version: float64(num), Tags: tags}
}

// loggedModelOf is the logged model a version was registered from (its source models:/m-<id>).
func loggedModelOf(v model.Version) (string, bool) {
	id, ok := strings.CutPrefix(v.Source, "models:/")
	return id, ok && strings.HasPrefix(id, "m-")
}

// loggedRuns reads the source run of each logged model the versions were registered from, as
// MLflow answers a version's run_id (what register_model sent: the logged model's source run). A
// logged model deleted since answers no run.
func (s *registry) loggedRuns(ctx context.Context, byName map[string]*registered) error {
	runs := map[string]string{}
	for _, m := range byName {
		for _, v := range m.versions {
			id, ok := loggedModelOf(v)
			if !ok {
				continue
			}
			if _, seen := runs[id]; !seen {
				lm, err := s.cfg.LoggedModels.LoggedModel(ctx, id)
				switch {
				case errors.Is(err, store.ErrNotFound):
				case err != nil:
					return fmt.Errorf("logged model %s of model %s: %w", id, m.name, err)
				default:
					runs[id] = lm.Info.SourceRunID
				}
			}
			if m.loggedRuns == nil {
				m.loggedRuns = map[string]string{}
			}
			m.loggedRuns[id] = runs[id]
		}
	}
	return nil
}

// integerVersion is whether MLflow can name a version: an integer (what asset.Number reads).
func integerVersion(v model.Version) bool { return model.Number(v.Version) > 0 || v.Version == "0" }

// registry reads the versions MLflow sees, of one name ("" every name), grouped by name in
// name order, each name's versions oldest first.
func (s *registry) registry(ctx context.Context, name string) ([]registered, error) {
	vs, err := s.cfg.Models.Models(ctx, name)
	if err != nil {
		return nil, err
	}
	rows, err := s.cfg.Models.RegisteredModels(ctx, name)
	if err != nil {
		return nil, err
	}
	byName := map[string]*registered{}
	var names []string
	at := func(n string) *registered {
		if m, ok := byName[n]; ok {
			return m
		}
		byName[n] = &registered{name: n}
		names = append(names, n)
		return byName[n]
	}
	for _, v := range vs {
		m := at(v.Name) // a name whose versions are all strings (0.0.1) is registered, without versions
		if t := millis(v); m.first == 0 || t < m.first {
			m.first = t
		}
		m.last = max(m.last, millis(v))
		if integerVersion(v) {
			m.versions = append(m.versions, v)
		}
	}
	for i := range rows {
		at(rows[i].Name).row = &rows[i]
	}
	aliases, err := s.cfg.Models.ModelAliases(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, a := range aliases {
		if m, ok := byName[a.Name]; ok {
			m.aliases = append(m.aliases, a)
		}
	}
	tags, err := s.cfg.Models.RegisteredModelTags(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		if m, ok := byName[t.Name]; ok {
			if m.tags == nil {
				m.tags = map[string]string{}
			}
			m.tags[t.Key] = t.Value
		}
	}
	if err := s.loggedRuns(ctx, byName); err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]registered, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out, nil
}

// registeredModel is one registered model, or MLflow's not-found error.
func (s *registry) registeredModel(ctx context.Context, name string) (registered, error) {
	if err := required("name", name); err != nil {
		return registered{}, err
	}
	ms, err := s.registry(ctx, name)
	if err != nil {
		return registered{}, err
	}
	if len(ms) == 0 {
		return registered{}, &Error{Status: http.StatusNotFound, Code: CodeNotFound,
			Message: fmt.Sprintf("Registered Model with name=%s not found", name)}
	}
	return ms[0], nil
}

type nameIn struct {
	Name string `json:"name"`
}

func (s *registry) getRegisteredModel(r *http.Request, in *nameIn) (any, error) {
	m, err := s.registeredModel(r.Context(), in.Name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"registered_model": m.json()}, nil
}

type latestIn struct {
	Name   string   `json:"name"`
	Stages []string `json:"stages"`
}

// latestVersions answers get_latest_versions: the highest version of each stage asked (every
// stage when none is), as MLflow's store does.
func (s *registry) latestVersions(r *http.Request, in *latestIn) (any, error) {
	m, err := s.registeredModel(r.Context(), in.Name)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, st := range in.Stages {
		c, err := canonicalStage(st)
		if err != nil {
			return nil, err
		}
		want[c] = true
	}
	out := []modelVersionJSON{}
	for _, v := range m.json().LatestVersions {
		if len(want) == 0 || want[v.CurrentStage] {
			out = append(out, v)
		}
	}
	return map[string]any{"model_versions": out}, nil
}

// canonicalStage is one of MLflow's four stages, matched without regard to case.
func canonicalStage(s string) (string, error) {
	for _, st := range model.Stages {
		if strings.EqualFold(s, st) {
			return st, nil
		}
	}
	return "", mlflowInvalid(fmt.Sprintf("Invalid Model Version stage: %s. Value must be one of None, Staging, Production, Archived.", s))
}

type versionIn struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (s *registry) getModelVersion(r *http.Request, in *versionIn) (any, error) {
	v, err := s.modelVersion(r.Context(), in)
	if err != nil {
		return nil, err
	}
	return map[string]any{"model_version": v}, nil
}

// modelVersion is the version in names, or MLflow's errors: a version that is not an integer,
// one that is not there.
func (s *registry) modelVersion(ctx context.Context, in *versionIn) (modelVersionJSON, error) {
	if err := required("name", in.Name); err != nil {
		return modelVersionJSON{}, err
	}
	if err := required("version", in.Version); err != nil {
		return modelVersionJSON{}, err
	}
	n := model.Number(in.Version)
	if n <= 0 && in.Version != "0" {
		return modelVersionJSON{}, mlflowInvalid(fmt.Sprintf("Parameter 'version' must be an integer, got '%s'.", in.Version))
	}
	ms, err := s.registry(ctx, in.Name)
	if err != nil {
		return modelVersionJSON{}, err
	}
	for _, m := range ms {
		for _, v := range m.versions {
			if model.Number(v.Version) == n {
				return m.versionJSON(v), nil
			}
		}
	}
	return modelVersionJSON{}, &Error{Status: http.StatusNotFound, Code: CodeNotFound,
		Message: fmt.Sprintf("Model Version (name=%s, version=%s) not found", in.Name, in.Version)}
}

type registrySearchIn struct {
	Filter     string   `json:"filter"`
	MaxResults jsonInt  `json:"max_results"`
	OrderBy    []string `json:"order_by"`
	PageToken  string   `json:"page_token"`
}

// page reads a search's max_results (def when absent, at most max) and page token.
func (in *registrySearchIn) page(def, most int) (limit, offset int, err error) {
	limit = int(in.MaxResults)
	switch {
	case in.MaxResults == 0:
		limit = def
	case in.MaxResults < 0 || int(in.MaxResults) > most:
		return 0, 0, mlflowInvalid(fmt.Sprintf("Invalid value %d for parameter 'max_results' supplied. It must be a positive integer at most %d", in.MaxResults, most))
	}
	offset, err = tracking.ParseToken(in.PageToken)
	return limit, offset, err
}

// pageOf is one page of a sorted result and the token of the next, if any.
func pageOf[T any](all []T, limit, offset int) ([]T, string) {
	if offset >= len(all) {
		return []T{}, ""
	}
	end := min(offset+limit, len(all))
	return all[offset:end], nextPage(end < len(all), offset, limit)
}

func (s *registry) searchRegisteredModels(r *http.Request, in *registrySearchIn) (any, error) {
	page, next, err := search(s, r, in, registrySearch[registeredModelJSON]{
		defaultN: defaultRegisteredModels, most: maxRegisteredModels,
		filter: tracking.ParseRegisteredModelFilter, order: tracking.ParseRegisteredModelOrder,
		rows: func(ms []registered, f tracking.Filter) (found []registeredModelJSON) {
			for _, m := range ms {
				if m.match(f) {
					found = append(found, m.json())
				}
			}
			return found
		},
		compare: func(a, b registeredModelJSON, key string) int {
			if key == "last_updated_timestamp" {
				return cmp.Compare(a.LastUpdatedTimestamp, b.LastUpdatedTimestamp)
			}
			return cmp.Compare(a.Name, b.Name)
		},
	})
	if err != nil {
		return nil, err
	}
	return registeredModelsPage{Models: page, Next: next}, nil
}

func (s *registry) searchModelVersions(r *http.Request, in *registrySearchIn) (any, error) {
	page, next, err := search(s, r, in, registrySearch[modelVersionJSON]{
		defaultN: defaultModelVersions, most: maxModelVersions,
		filter: tracking.ParseModelVersionFilter, order: tracking.ParseModelVersionOrder,
		rows: func(ms []registered, f tracking.Filter) (found []modelVersionJSON) {
			for _, m := range ms {
				for _, v := range m.versions {
					j := m.versionJSON(v)
					if f.Match(j.filterable(model.Number(v.Version))) {
						found = append(found, j)
					}
				}
			}
			return found
		},
		compare: func(a, b modelVersionJSON, key string) int {
			switch key {
			case "name":
				return cmp.Compare(a.Name, b.Name)
			case "version_number":
				return cmp.Compare(model.Number(a.Version), model.Number(b.Version))
			case "creation_timestamp":
				return cmp.Compare(a.CreationTimestamp, b.CreationTimestamp)
			}
			return cmp.Compare(a.LastUpdatedTimestamp, b.LastUpdatedTimestamp)
		},
	})
	if err != nil {
		return nil, err
	}
	return modelVersionsPage{Versions: page, Next: next}, nil
}

// registrySearch is what a registry search of rows of type T is made of: its page sizes, its
// filter and order_by grammars, the rows of the registry a filter keeps, and how two rows
// compare by one order_by key.
type registrySearch[T any] struct {
	defaultN, most int
	filter         func(string) (tracking.Filter, error)
	order          func([]string) ([]tracking.OrderBy, error)
	rows           func([]registered, tracking.Filter) []T
	compare        func(a, b T, key string) int
}

// search answers one registry search: the page asked for of the rows the filter keeps, sorted
// by the order_by clauses in turn, and the next page's token.
func search[T any](s *registry, r *http.Request, in *registrySearchIn, q registrySearch[T]) ([]T, string, error) {
	limit, offset, err := in.page(q.defaultN, q.most)
	if err != nil {
		return nil, "", err
	}
	f, err := q.filter(in.Filter)
	if err != nil {
		return nil, "", err
	}
	order, err := q.order(in.OrderBy)
	if err != nil {
		return nil, "", err
	}
	ms, err := s.registry(r.Context(), "")
	if err != nil {
		return nil, "", err
	}
	found := q.rows(ms, f)
	slices.SortStableFunc(found, func(a, b T) int {
		for _, o := range order {
			c := q.compare(a, b, o.Key)
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	page, next := pageOf(found, limit, offset)
	return page, next, nil
}

type registeredModelsPage struct {
	Models []registeredModelJSON `json:"registered_models"`
	Next   string                `json:"next_page_token,omitempty"`
}

type modelVersionsPage struct {
	Versions []modelVersionJSON `json:"model_versions"`
	Next     string             `json:"next_page_token,omitempty"`
}
