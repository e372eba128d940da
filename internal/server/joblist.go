package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// job list's filters and pages, job archive / restore / delete.

const (
	defaultJobPage = 50
	maxJobPage     = 1000
	maxListFilters = 32 // statuses or tags in one query
)

// jobListRoutes registers job archive, restore and delete (job list is GET /api/jobs).
func (s *jobRoutes) jobListRoutes(mux routes) {
	mux.handle("POST /api/jobs/{name}/archive", contributeAccess, answer(s.Server, http.StatusOK, s.archiveJob(true)))
	mux.handle("POST /api/jobs/{name}/restore", contributeAccess, answer(s.Server, http.StatusOK, s.archiveJob(false)))
	mux.handle("DELETE /api/jobs/{name}", contributeAccess.audited("job.delete"), noContent(s.Server, s.deleteJob))
}

// parseJobList reads GET /api/jobs's query parameters (api.JobListQuery) into a store filter.
func parseJobList(v url.Values) (store.RunFilter, error) {
	f := store.RunFilter{Limit: defaultJobPage, Experiment: v.Get("experiment"), Compute: v.Get("compute"),
		Query: v.Get("q"), User: v.Get("user"), Order: v.Get("order"), Archived: store.ArchivedHide}
	if len(v["status"]) > maxListFilters || len(v["tag"]) > maxListFilters {
		return f, badRequest(fmt.Sprintf("at most %d status and %d tag filters", maxListFilters, maxListFilters))
	}
	for _, st := range v["status"] {
		s := job.State(st)
		if !s.Valid() {
			return f, badRequest(fmt.Sprintf("status: unknown status %q", st))
		}
		f.Statuses = append(f.Statuses, s)
	}
	for _, t := range v["tag"] {
		k, val, has := strings.Cut(t, "=")
		if k == "" {
			return f, badRequest(fmt.Sprintf("tag: %q names no key (want key or key=value)", t))
		}
		f.Tags = append(f.Tags, store.TagFilter{Key: k, Value: val, HasValue: has})
	}
	if since := v.Get("since"); since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			return f, badRequest(fmt.Sprintf("since: %q is not an RFC 3339 time", since))
		}
		f.Since = t
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return f, badRequest(fmt.Sprintf("limit: %q is not a positive number", l))
		}
		// A larger page is cut to the largest, with a next page's token like any other.
		f.Limit = min(n, maxJobPage)
	}
	if !store.ValidRunOrder(f.Order) {
		return f, badRequest(fmt.Sprintf("order: %q is not one of %s", f.Order, strings.Join(store.RunOrders(), ", ")))
	}
	switch v.Get("archived") {
	case "":
	case "only":
		f.Archived = store.ArchivedOnly
	case "all":
		f.Archived = store.ArchivedAny
	default:
		return f, badRequest(fmt.Sprintf("archived: %q is not only or all", v.Get("archived")))
	}
	if tok := v.Get("page_token"); tok != "" {
		c, err := decodePageToken(tok, f.Order)
		if err != nil {
			return f, err
		}
		f.After = c
	}
	return f, nil
}

// A page token is the cursor of the page's last run, opaque to clients: its values reach the
// query only as bound parameters.
func encodePageToken(c *store.RunCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePageToken(tok, order string) (*store.RunCursor, error) {
	bad := badRequest("page_token: not a token this server gave (start the list again without it)")
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) > 4096 {
		return nil, bad
	}
	var c store.RunCursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, bad
	}
	if c.Order != order {
		return nil, badRequest(fmt.Sprintf("page_token: the token continues a list in order %q, not %q", c.Order, order))
	}
	return &c, nil
}

// listJobs answers a page of runs with their last metrics (one query for the page); the next
// page's token is in the NextPageHeader.
func (s *jobRoutes) listJobs(w http.ResponseWriter, r *http.Request) {
	f, err := parseJobList(r.URL.Query())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	runs, next, err := s.cfg.Store.Runs.RunsPage(r.Context(), f)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	out, err := s.listed(r.Context(), runs, f.Archived != store.ArchivedHide)
	if err == nil && next != nil {
		w.Header().Set(api.NextPageHeader, encodePageToken(next))
	}
	s.respond(w, http.StatusOK, out, err)
}

// listed is a page of runs as job list shows them: with their last metrics, tags, sweep or
// pipeline, and whether they are archived (asked only when the list may show archived runs).
func (s *jobRoutes) listed(ctx context.Context, runs []*job.Run, mayBeArchived bool) ([]api.RunDetail, error) {
	ids := make([]string, len(runs))
	for i, run := range runs {
		ids[i] = run.ID
	}
	page := pageLookup{ids: ids}
	metrics := lookUp(ctx, &page, s.cfg.Store.Runs.LastMetricsOf)
	tags := lookUp(ctx, &page, s.cfg.Store.Runs.TagsOf)
	trials := lookUp(ctx, &page, s.cfg.Store.Parents.ParentsOf)
	steps := lookUp(ctx, &page, s.cfg.Store.Parents.StepsOf)
	archived := map[string]bool{}
	if mayBeArchived { // else none is
		archived = lookUp(ctx, &page, s.cfg.Store.Runs.ArchivedOf)
	}
	if page.err != nil {
		return nil, page.err
	}
	out := make([]api.RunDetail, 0, len(runs))
	for _, run := range runs {
		d := api.RunDetail{Run: *run, Events: []job.Event{}, Metrics: metrics[run.ID], Archived: archived[run.ID],
			Tags: tags[run.ID]}
		if d.Metrics == nil {
			d.Metrics = map[string]float64{}
		}
		if t, ok := trials[run.ID]; ok {
			d.TrialOf = &api.TrialOf{Sweep: t.Parent, Index: t.Index}
		}
		if st, ok := steps[run.ID]; ok {
			d.PipelineOf = &api.PipelineOf{Pipeline: st.Pipeline, Step: st.Name}
		}
		if d.Warnings == nil {
			d.Warnings = []string{}
		}
		out = append(out, d)
	}
	return out, nil
}

// pageLookup is the store's lookups of one page's runs, made one after another until one fails:
// err is the first failure, after which nothing more is asked.
type pageLookup struct {
	ids []string
	err error
}

// lookUp answers what get says of the page's runs (by run ID), or nothing once a lookup failed.
func lookUp[T any](ctx context.Context, p *pageLookup, get func(ctx context.Context, ids []string) (map[string]T, error)) map[string]T {
	if p.err != nil {
		return nil
	}
	m, err := get(ctx, p.ids)
	p.err = err
	return m
}

func (s *jobRoutes) archiveJob(archive bool) func(r *http.Request) (*api.RunDetail, error) {
	return func(r *http.Request) (*api.RunDetail, error) {
		id := r.PathValue("name")
		if err := s.cfg.Controller.Archive(r.Context(), id, archive); err != nil {
			return nil, err
		}
		run, err := s.cfg.Store.Runs.Run(r.Context(), id)
		return s.detailOf(r, run, err)
	}
}

func (s *jobRoutes) deleteJob(r *http.Request) error {
	id := r.PathValue("name")
	err := s.cfg.Controller.DeleteRun(r.Context(), id) // its directory and the blobs only it used too
	if errors.Is(err, store.ErrNotEnded) {
		err = &httpError{http.StatusConflict, api.CodeConflict,
			fmt.Sprintf("job %s has not ended: only ended jobs can be deleted (cancel it first)", id)}
	}
	return err
}
