package mlflowapi

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// search_logged_models: the models of the experiments that the filter keeps (searched in
// memory, as the registry's searches), in order, a page at a time.

const (
	defaultLoggedModels = 100
	maxLoggedModels     = 1000
)

type loggedModelSearchIn struct {
	ExperimentIDs []string                    `json:"experiment_ids"`
	Filter        string                      `json:"filter"`
	Datasets      []tracking.DatasetRef       `json:"datasets"`
	MaxResults    jsonInt                     `json:"max_results"`
	OrderBy       []tracking.LoggedModelOrder `json:"order_by"`
	PageToken     string                      `json:"page_token"`
}

type loggedModelsPage struct {
	Models []*tracking.LoggedModel `json:"models"`
	Next   string                  `json:"next_page_token,omitempty"`
}

// searchLoggedModels answers a search; a run's token finds its own run's models only.
func (s *loggedModels) searchLoggedModels(r *http.Request, in *loggedModelSearchIn) (any, error) {
	if len(in.ExperimentIDs) == 0 {
		return nil, required("experiment_ids", "")
	}
	if len(in.ExperimentIDs) > tracking.MaxSearchIDs {
		return nil, mlflowInvalid("experiment_ids may list at most 1000 experiments")
	}
	for _, d := range in.Datasets {
		if d.Name == "" {
			return nil, mlflowInvalid("`dataset_name` in the `datasets` clause must be specified.")
		}
	}
	page := registrySearchIn{MaxResults: in.MaxResults, PageToken: in.PageToken}
	limit, offset, err := page.page(defaultLoggedModels, maxLoggedModels)
	if err != nil {
		return nil, err
	}
	f, err := tracking.ParseLoggedModelFilter(in.Filter)
	if err != nil {
		return nil, err
	}
	order, err := tracking.ParseLoggedModelOrder(in.OrderBy)
	if err != nil {
		return nil, err
	}
	datasets := make([][]tracking.DatasetRef, len(order))
	for i, o := range in.OrderBy {
		datasets[i] = in.Datasets
		if o.DatasetName != "" {
			datasets[i] = []tracking.DatasetRef{{Name: o.DatasetName, Digest: o.DatasetDigest}}
		}
	}
	all, err := s.cfg.LoggedModels.LoggedModels(r.Context(), store.LoggedModelQuery{ExperimentIDs: in.ExperimentIDs})
	if err != nil {
		return nil, err
	}
	var found []*tracking.LoggedModel
	for _, m := range all {
		if s.api.allowModel(r, m) == nil && f.MatchLoggedModel(m, in.Datasets) {
			found = append(found, m)
		}
	}
	tracking.SortLoggedModels(found, order, datasets)
	models, next := pageOf(found, limit, offset)
	return loggedModelsPage{Models: models, Next: next}, nil
}
