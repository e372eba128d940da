package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// NextPageHeader carries, in a job list answer, the token of the next page (absent on the last
// page). The body stays a plain list of runs, as before paging existed.
const NextPageHeader = "X-Hangar-Next-Page-Token"

// JobListQuery is what GET /api/jobs filters on (query parameters of the same names).
type JobListQuery struct {
	Statuses   []string  // status (repeatable)
	Experiment string    // experiment
	Compute    string    // compute
	Tags       []string  // tag: "key" or "key=value" (repeatable)
	Since      time.Time // since: RFC 3339
	Query      string    // q: part of the name or display name
	User       string    // user: the user who submitted the job
	Limit      int       // limit: 1..1000 (default 50)
	PageToken  string    // page_token: the NextPageHeader of the previous page
	Order      string    // order: created, -created (default), name, -name, status, -status
	Archived   string    // archived: "" (hide archived runs), "only" or "all"
}

// Values encodes the query as URL parameters.
func (q JobListQuery) Values() url.Values {
	v := url.Values{}
	for _, s := range q.Statuses {
		v.Add("status", s)
	}
	for _, t := range q.Tags {
		v.Add("tag", t)
	}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("experiment", q.Experiment)
	set("compute", q.Compute)
	set("q", q.Query)
	set("user", q.User)
	set("page_token", q.PageToken)
	set("order", q.Order)
	set("archived", q.Archived)
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// JobPage is a page of runs and the token of the next one ("" on the last page).
type JobPage struct {
	Runs []RunDetail
	Next string
}

// ListPage lists one page of runs matching q.
func (c *JobClient) ListPage(ctx context.Context, q JobListQuery) (*JobPage, error) {
	resp, err := c.client.get(ctx, "/api/jobs?"+q.Values().Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	p := &JobPage{Next: resp.Header.Get(NextPageHeader)}
	if err := json.NewDecoder(resp.Body).Decode(&p.Runs); err != nil {
		return nil, fmt.Errorf("decode job list: %w", err)
	}
	return p, nil
}

// Archive hides a run from job list (archive true) or shows it again.
func (c *JobClient) Archive(ctx context.Context, name string, archive bool) (*RunDetail, error) {
	verb := "/archive"
	if !archive {
		verb = "/restore"
	}
	return call[RunDetail](ctx, c.client, http.MethodPost, "/api/jobs/"+url.PathEscape(name)+verb, nil)
}

// Delete removes an ended run with its events, logs and metrics.
func (c *JobClient) Delete(ctx context.Context, name string) error {
	return c.client.do(ctx, http.MethodDelete, "/api/jobs/"+url.PathEscape(name), nil, nil)
}
