package server

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

func createTagged(t *testing.T, ts *testServer, name, experiment string, tags map[string]string) {
	t.Helper()
	_, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: name, DisplayName: "Disp " + name,
		ExperimentName: experiment, Meta: asset.Meta{Tags: tags}, Command: "python train.py"}})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

func names(ds []api.RunDetail) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// listAll walks every page of q and returns the names in order, and how many pages it took.
func listAll(t *testing.T, ts *testServer, q api.JobListQuery) ([]string, int) {
	t.Helper()
	var got []string
	for pages := 1; pages < 20; pages++ {
		p, err := ts.admin.Jobs.ListPage(t.Context(), q)
		if err != nil {
			t.Fatalf("list %+v: %v", q, err)
		}
		got = append(got, names(p.Runs)...)
		if p.Next == "" {
			return got, pages
		}
		q.PageToken = p.Next
	}
	t.Fatal("more than 20 pages")
	return nil, 0
}

func TestJobListFiltersSortsAndPages(t *testing.T) {
	ts := newTestServer(t)
	for _, j := range []struct{ name, exp, team string }{
		{"a1", "mnist", "x"}, {"a2", "cifar", "y"}, {"a3", "mnist", "y"}, {"a4", "mnist", "x"}, {"a5", "cifar", "x"},
	} {
		createTagged(t, ts, j.name, j.exp, map[string]string{"team": j.team})
	}
	tests := []struct {
		name      string
		q         api.JobListQuery
		want      []string
		wantPages int
	}{
		{"newest first in pages of 2", api.JobListQuery{Limit: 2}, []string{"a5", "a4", "a3", "a2", "a1"}, 3},
		{"by name", api.JobListQuery{Limit: 4, Order: "name"}, []string{"a1", "a2", "a3", "a4", "a5"}, 2},
		{"experiment", api.JobListQuery{Experiment: "mnist", Limit: 1}, []string{"a4", "a3", "a1"}, 3},
		{"tag with value", api.JobListQuery{Tags: []string{"team=x"}, Order: "created"}, []string{"a1", "a4", "a5"}, 1},
		{"tag key", api.JobListQuery{Tags: []string{"team"}, Experiment: "cifar"}, []string{"a5", "a2"}, 1},
		{"search the display name", api.JobListQuery{Query: "disp A3"}, []string{"a3"}, 1},
		{"status", api.JobListQuery{Statuses: []string{"Queued", "NotStarted"}, Compute: "local", Limit: 5}, []string{"a5", "a4", "a3", "a2", "a1"}, 1},
		{"since", api.JobListQuery{Since: time.Now().Add(time.Hour)}, nil, 1},
		{"submitted by the workspace token's user", api.JobListQuery{User: api.AdminUser, Experiment: "cifar"}, []string{"a5", "a2"}, 1},
		{"submitted by another user", api.JobListQuery{User: "nobody"}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pages := listAll(t, ts, tt.q)
			if diff := cmp.Diff(tt.want, got); diff != "" || pages != tt.wantPages {
				t.Errorf("pages %d, want %d; names (-want +got):\n%s", pages, tt.wantPages, diff)
			}
		})
	}
}

func TestJobListRefusesBadQueries(t *testing.T) {
	ts := newTestServer(t)
	createTagged(t, ts, "a1", "", nil)
	p, err := ts.admin.Jobs.ListPage(t.Context(), api.JobListQuery{Limit: 1, Order: "name"})
	if err != nil {
		t.Fatal(err)
	}
	createTagged(t, ts, "a2", "", nil)
	p, err = ts.admin.Jobs.ListPage(t.Context(), api.JobListQuery{Limit: 1, Order: "name"})
	if err != nil || p.Next == "" {
		t.Fatalf("first page: %+v, %v; want a next token", p, err)
	}
	injected := base64.RawURLEncoding.EncodeToString([]byte(`{"o":"name","i":"' OR 1=1 --"}`))
	tests := []struct{ query, want string }{
		{"status=Sleeping", `status: unknown status "Sleeping"`},
		{"order=created_at%3BDROP", `order: "created_at;DROP" is not one of`},
		{"limit=-1", `limit: "-1" is not a positive number`},
		{"since=yesterday", `since: "yesterday" is not an RFC 3339 time`},
		{"tag==v", `tag: "=v" names no key`},
		{"archived=maybe", `archived: "maybe" is not only or all`},
		{"page_token=%27%20OR%201%3D1", "page_token: not a token this server gave"},
		{"order=-created&page_token=" + url.QueryEscape(p.Next), `page_token: the token continues a list in order "name", not "-created"`},
	}
	for _, tt := range tests {
		status, body := ts.raw(t, adminToken, http.MethodGet, "/api/jobs?"+tt.query, "")
		if status != http.StatusBadRequest || !strings.Contains(body.Error, tt.want) {
			t.Errorf("GET /api/jobs?%s = %d %q, want 400 %q", tt.query, status, body.Error, tt.want)
		}
	}
	// A well-formed token's values are compared, never run: the list goes on after that name.
	page, err := ts.admin.Jobs.ListPage(t.Context(), api.JobListQuery{Order: "name", PageToken: injected})
	if err != nil || !cmp.Equal(names(page.Runs), []string{"a1", "a2"}) {
		t.Errorf("list after %q = %v, %v; want a1 a2", "' OR 1=1 --", names(page.Runs), err)
	}
}

// job list -o json carries each run's last metrics, read for the whole page at once.
func TestJobListCarriesLastMetrics(t *testing.T) {
	ts := newTestServer(t)
	ts.runLoop(t)
	ts.createJob(t, "m1")
	ts.createJob(t, "m2")
	testwait.For(t, "both runs submitted", func() bool { return len(ts.fake.Submitted()) == 2 })
	now := time.Now().UTC()
	ts.report(t, "m1", job.Running, nil)
	if _, err := ts.runClient("m1").Runs.ShipMetrics(t.Context(), "m1", api.MetricBatch{Metrics: []job.Metric{
		{Seq: 1, Name: "loss", Value: 0.9, Time: now}, {Seq: 2, Name: "loss", Value: 0.4, Time: now}, {Seq: 3, Name: "acc", Value: 0.8, Time: now},
	}}); err != nil {
		t.Fatal(err)
	}
	p, err := ts.admin.Jobs.ListPage(t.Context(), api.JobListQuery{Order: "name"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, d := range p.Runs {
		got[d.ID] = d.Metrics
	}
	want := map[string]map[string]float64{"m1": {"loss": 0.4, "acc": 0.8}, "m2": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestJobArchiveRestoreAndDelete(t *testing.T) {
	ts := newTestServer(t)
	ts.runLoop(t)
	ctx := t.Context()
	ts.createJob(t, "old")
	ts.createJob(t, "new")
	testwait.For(t, "both runs submitted", func() bool { return len(ts.fake.Submitted()) == 2 })
	d, err := ts.admin.Jobs.Archive(ctx, "old", true)
	if err != nil || !d.Archived {
		t.Fatalf("archive: %+v, %v", d, err)
	}
	list := func(archived string) []string {
		p, err := ts.admin.Jobs.ListPage(ctx, api.JobListQuery{Archived: archived})
		if err != nil {
			t.Fatal(err)
		}
		return names(p.Runs)
	}
	if got := list(""); !cmp.Equal(got, []string{"new"}) {
		t.Errorf("default list after archive = %v, want new alone", got)
	}
	if got := list("only"); !cmp.Equal(got, []string{"old"}) {
		t.Errorf("archived list = %v, want old", got)
	}
	if got := list("all"); !cmp.Equal(got, []string{"new", "old"}) {
		t.Errorf("list of all = %v", got)
	}
	if p, err := ts.admin.Jobs.ListPage(ctx, api.JobListQuery{Archived: "all"}); err != nil || p.Runs[0].Archived || !p.Runs[1].Archived {
		t.Errorf("archived marks in the list of all: %+v, %v", p, err)
	}
	if d, err := ts.admin.Jobs.Archive(ctx, "old", false); err != nil || d.Archived {
		t.Fatalf("restore: %+v, %v", d, err)
	}
	if got := list(""); !cmp.Equal(got, []string{"new", "old"}) {
		t.Errorf("list after restore = %v", got)
	}

	err = ts.admin.Jobs.Delete(ctx, "old")
	if !strings.Contains(err.Error(), "only ended jobs can be deleted") || !strings.Contains(err.Error(), "old") {
		t.Errorf("delete a queued job = %v, want a conflict naming it", err)
	}
	ts.report(t, "old", job.Running, nil)
	code := 0
	ts.report(t, "old", job.Completed, &code)
	if err := ts.admin.Jobs.Delete(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.admin.Jobs.Get(ctx, "old"); !api.IsNotFound(err) {
		t.Errorf("show after delete = %v, want not found", err)
	}
	if err := ts.admin.Jobs.Delete(ctx, "old"); !api.IsNotFound(err) {
		t.Errorf("delete again = %v, want not found", err)
	}
	if _, err := ts.admin.Jobs.Archive(ctx, "nope", true); !api.IsNotFound(err) {
		t.Errorf("archive a missing job = %v, want not found", err)
	}
}

// The supervisor reports the command it bound with Running; job show answers it.
func TestBoundCommandReportedWithRunning(t *testing.T) {
	ts := newTestServer(t)
	ts.runLoop(t)
	ts.createJob(t, "b1")
	testwait.For(t, "the run submitted", func() bool { return len(ts.fake.Submitted()) == 1 })
	bound := "python train.py --lr 0.01 --out /node/run/outputs/model"
	if _, err := ts.runClient("b1").Runs.ReportStatus(t.Context(), "b1", api.StatusReport{State: job.Running, Command: bound, Time: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	d, err := ts.admin.Jobs.Get(t.Context(), "b1")
	if err != nil || d.BoundCommand != bound || d.Spec.Command != "python train.py" {
		t.Errorf("show: bound %q, spec command %q, %v", d.BoundCommand, d.Spec.Command, err)
	}
}

// A tag set through MLflow is a tag like the job's own: job list filters on it and shows it.
func TestJobListSeesTagsSetThroughMLflow(t *testing.T) {
	ts := newTestServer(t)
	createTagged(t, ts, "t1", "", map[string]string{"team": "x"})
	createTagged(t, ts, "t2", "", nil)
	if st, body := ts.mlflowCall(t, adminToken, http.MethodPost, "/runs/set-tag",
		map[string]string{"run_id": "t2", "key": "stage", "value": "prod"}); st != http.StatusOK {
		t.Fatalf("set-tag: %d %v", st, body)
	}
	p, err := ts.admin.Jobs.ListPage(t.Context(), api.JobListQuery{Tags: []string{"stage=prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(p.Runs); len(got) != 1 || got[0] != "t2" || p.Runs[0].Tags["stage"] != "prod" {
		t.Errorf("tag stage=prod lists %v (tags %v), want t2 with its tag", got, p.Runs)
	}
	all, err := ts.admin.Jobs.ListPage(t.Context(), api.JobListQuery{Order: "name"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Runs) != 2 || all.Runs[0].Tags["team"] != "x" {
		t.Errorf("the job's spec tag is missing from the list: %+v", all.Runs)
	}
}
