package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// fakeJobs is a workspace holding jobs a1 (Completed, bound command, inputs, params, tags,
// metrics) and a2 (Running); it records the job list queries and the deletes it got.
type fakeJobs struct {
	url     string
	mu      sync.Mutex
	queries []url.Values
	deleted []string
}

var fakeEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fakeRun(name string) api.RunDetail {
	start, end := fakeEpoch, fakeEpoch.Add(time.Minute)
	d := api.RunDetail{Run: job.Run{ID: name, Compute: "local", Status: job.Completed, CreatedAt: fakeEpoch,
		StartedAt: &start, EndedAt: &end, Spec: job.Spec{Command: "python train.py --lr ${{inputs.lr}} --data ${{inputs.data}}",
			Inputs: map[string]job.Input{"lr": {Type: "number", Value: "0.01"}, "data": {Type: "uri_folder", Path: "/home/u/data", Mode: "ro_mount"}}}},
		Events: []job.Event{}, Metrics: map[string]float64{"loss": 0.25, "acc": 0.9}}
	switch name {
	case "a1":
		d.BoundCommand = "python train.py --lr 0.01 --data /node/runs/a1/inputs/data"
		d.Params = map[string]string{"optimizer": "adam"}
		d.Tags = map[string]string{"team": "vision"}
	case "a2":
		d.Status, d.EndedAt = job.Running, nil
		d.Spec.Inputs = map[string]job.Input{"lr": {Type: "number", Value: "0.1"}}
		d.Metrics = map[string]float64{"loss": 0.5}
		d.Params = map[string]string{"optimizer": "sgd"}
	}
	return d
}

func newFakeJobs(t *testing.T) *fakeJobs {
	t.Helper()
	f := &fakeJobs{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/jobs", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.queries = append(f.queries, r.URL.Query())
		f.mu.Unlock()
		if r.URL.Query().Get("page_token") == "" {
			w.Header().Set(api.NextPageHeader, "tok2")
		}
		_ = json.NewEncoder(w).Encode([]api.RunDetail{fakeRun("a2"), fakeRun("a1")})
	})
	mux.HandleFunc("GET /api/jobs/{name}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("name") {
		case "a1", "a2":
			_ = json.NewEncoder(w).Encode(fakeRun(r.PathValue("name")))
		default:
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: "run " + r.PathValue("name") + ": not found", Code: api.CodeNotFound})
		}
	})
	mux.HandleFunc("GET /api/jobs/{name}/metrics", func(w http.ResponseWriter, r *http.Request) {
		var ms []job.Metric
		for i, v := range []float64{1, 0.5, 0.25} {
			ms = append(ms, job.Metric{Seq: int64(2*i + 1), Name: "loss", Value: v, Step: int64(i), Time: fakeEpoch.Add(time.Duration(i) * time.Second)})
			ms = append(ms, job.Metric{Seq: int64(2*i + 2), Name: "acc", Value: 0.3 * float64(i+1), Step: int64(i), Time: fakeEpoch.Add(time.Duration(i) * time.Second)})
		}
		_ = json.NewEncoder(w).Encode(api.MetricsResponse{Metrics: ms})
	})
	mux.HandleFunc("POST /api/jobs/{name}/archive", func(w http.ResponseWriter, r *http.Request) {
		d := fakeRun(r.PathValue("name"))
		d.Archived = true
		_ = json.NewEncoder(w).Encode(d)
	})
	mux.HandleFunc("DELETE /api/jobs/{name}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.deleted = append(f.deleted, r.PathValue("name"))
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// cliRun runs the CLI in-process against the fake workspace, stdin an answer that is (or is
// not) from a terminal.
func (f *fakeJobs) cliRun(t *testing.T, stdin string, terminal bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("HANGAR_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(stdin), terminal: func(io.Reader) bool { return terminal }}
	root := newRoot(env)
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"--workspace", f.url}, args...))
	code = Execute(t.Context(), root, &errOut)
	return code, out.String(), errOut.String()
}

func TestJobShowPrintsBoundCommandInputsParamsTags(t *testing.T) {
	f := newFakeJobs(t)
	for _, args := range [][]string{{"job", "show", "a1"}, {"job", "show", "-n", "a1"}, {"job", "show", "--name=a1"}} {
		code, out, stderr := f.cliRun(t, "", false, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", args, code, stderr)
		}
		for _, want := range []string{
			"Command:      python train.py --lr 0.01 --data /node/runs/a1/inputs/data\n",
			"Spec command: python train.py --lr ${{inputs.lr}} --data ${{inputs.data}}\n",
			"Inputs:\n  data = uri_folder /home/u/data (ro_mount)\n  lr = 0.01 (number)\n",
			"Params:\n  optimizer = adam\n",
			"Tags:\n  team: vision\n",
			"Metrics (last value):\n  acc = 0.9\n  loss = 0.25\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
	}
}

func TestJobListSendsFiltersAndPrintsTheNextPageHint(t *testing.T) {
	f := newFakeJobs(t)
	code, out, stderr := f.cliRun(t, "", false, "job", "list", "--status", "Failed", "--status", "Canceled", "--experiment", "mnist",
		"--compute", "gpu", "--tag", "best", "--tag", "team=a", "--search", "res", "--order", "name", "--limit", "2", "--all", "--since", "2026-01-01")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	since, _ := time.ParseInLocation("2006-01-02", "2026-01-01", time.Local)
	want := url.Values{"status": {"Failed", "Canceled"}, "experiment": {"mnist"}, "compute": {"gpu"}, "tag": {"best", "team=a"},
		"q": {"res"}, "order": {"name"}, "limit": {"2"}, "archived": {"all"}, "since": {since.UTC().Format(time.RFC3339Nano)}}
	if diff := cmp.Diff(want, f.queries[0]); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(out, "NAME  DISPLAY NAME  STATUS     COMPUTE") || !strings.Contains(out, "\na1 ") {
		t.Errorf("table:\n%s", out)
	}
	if stderr != "More jobs: add --page-token tok2\n" {
		t.Errorf("stderr %q, want the next page hint", stderr)
	}
	if code, _, stderr := f.cliRun(t, "", false, "job", "list", "--page-token", "tok2"); code != 0 || stderr != "" {
		t.Errorf("last page: exit %d, stderr %q; want no hint", code, stderr)
	}
	if got := f.queries[1].Get("page_token"); got != "tok2" {
		t.Errorf("page_token sent %q", got)
	}
}

func TestJobListJSONCarriesMetricsAndQuerySelects(t *testing.T) {
	f := newFakeJobs(t)
	code, out, stderr := f.cliRun(t, "", false, "job", "list", "-o", "json")
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s %s", code, err, out, stderr)
	}
	if m := got[1]["metrics"]; !cmp.Equal(m, map[string]any{"loss": 0.25, "acc": 0.9}) {
		t.Errorf("a1 metrics = %v", m)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--query", "[?metrics.loss < `0.3`].name"}, "a1\n"},
		{[]string{"--query", "[].name"}, "a2\na1\n"},
		{[]string{"--query", "[0].{name: name, status: status}", "-o", "json"}, "{\n  \"name\": \"a2\",\n  \"status\": \"Running\"\n}\n"},
		{[]string{"--query", "[0].{name: name, status: status}"}, "Name  Status\na2    Running\n"}, // a table of the object, as az's
		{[]string{"--query", "[].{name: name, status: status}", "-o", "tsv"}, "a2\tRunning\na1\tCompleted\n"},
		{[]string{"--query", "[1].metrics"}, "Acc  Loss\n0.9  0.25\n"},
		{[]string{"--query", "[0].{n: name}", "-o", "yaml"}, "n: a2\n"},
	}
	for _, tt := range tests {
		code, out, stderr := f.cliRun(t, "", false, append([]string{"job", "list"}, tt.args...)...)
		if code != 0 || out != tt.want {
			t.Errorf("job list %v: exit %d, stdout %q (stderr %q); want %q", tt.args, code, out, stderr, tt.want)
		}
	}
}

func TestJobMetricsPrintsTheHistory(t *testing.T) {
	f := newFakeJobs(t)
	code, out, stderr := f.cliRun(t, "", false, "job", "metrics", "a1", "--name", "loss")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "METRIC  STEP  TIME") || !strings.HasPrefix(lines[1], "loss    0     ") ||
		!strings.HasSuffix(lines[3], "  0.25") {
		t.Errorf("history:\n%s", out)
	}
	// Not a terminal: no chart.
	if strings.ContainsAny(out, "┤┼╯╰") {
		t.Errorf("a chart was drawn on a non-terminal:\n%s", out)
	}
	code, out, _ = f.cliRun(t, "", false, "job", "metrics", "a1", "-o", "json", "--query", "[?name=='acc'].step")
	if code != 0 || out != "[\n  0,\n  1,\n  2\n]\n" {
		t.Errorf("json query: exit %d, %q", code, out)
	}
	code, _, stderr = f.cliRun(t, "", false, "job", "metrics", "a1", "--name", "bleu")
	if code != 1 || !strings.Contains(stderr, `job a1 has no metric "bleu" (it has: [acc loss])`) {
		t.Errorf("unknown metric: exit %d, %q", code, stderr)
	}
}

func TestWriteChartsDrawsEachMetric(t *testing.T) {
	var b bytes.Buffer
	writeCharts(&b, []job.Metric{{Name: "loss", Value: 1}, {Name: "loss", Value: 0.5}, {Name: "loss", Value: 0.2}, {Name: "once", Value: 3}})
	if !strings.Contains(b.String(), "loss") || strings.Contains(b.String(), "once") || !strings.ContainsAny(b.String(), "┤╮╰─") {
		t.Errorf("charts:\n%s", b.String())
	}
}

func TestJobCompareSideBySide(t *testing.T) {
	f := newFakeJobs(t)
	code, out, stderr := f.cliRun(t, "", false, "job", "compare", "a1", "a2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `                 a1            a2
status           Completed     Running
input data       /home/u/data  -
input lr         0.01          0.1
param optimizer  adam          sgd
metric acc       0.9           -
metric loss      0.25          0.5
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("compare (-want +got):\n%s", diff)
	}
	code, out, _ = f.cliRun(t, "", false, "job", "compare", "a1", "a2", "-o", "json", "--query", "[].metrics.loss")
	if code != 0 || out != "[\n  0.25,\n  0.5\n]\n" {
		t.Errorf("compare json: exit %d, %q", code, out)
	}
	code, _, stderr = f.cliRun(t, "", false, "job", "compare", "a1", "zz")
	if code != 1 || !strings.Contains(stderr, "job zz: run zz: not found") {
		t.Errorf("compare with a missing job: exit %d, %q", code, stderr)
	}
}

func TestDestructiveVerbsConfirm(t *testing.T) {
	tests := []struct {
		name        string
		stdin       string
		terminal    bool
		args        []string
		wantCode    int
		wantDeleted bool
		wantStderr  string
	}{
		{"no terminal, no --yes: refused without reading", "y\n", false, []string{"job", "delete", "a1"}, 2, false,
			"Error: delete job a1 needs confirmation: stdin is not a terminal, so pass --yes (-y) to delete job a1 without being asked\n"},
		{"--yes", "", false, []string{"job", "delete", "a1", "--yes"}, 0, true, "Deleted job a1\n"},
		{"-y with -n", "", false, []string{"job", "delete", "-y", "-n", "a1"}, 0, true, "Deleted job a1\n"},
		{"terminal, answered y", "y\n", true, []string{"job", "delete", "a1"}, 0, true,
			"Delete job a1 with its events, logs and metrics? This cannot be undone. [y/N] Deleted job a1\n"},
		{"terminal, answered n", "n\n", true, []string{"job", "delete", "a1"}, 1, false,
			"Delete job a1 with its events, logs and metrics? This cannot be undone. [y/N] Error: did not delete job a1 (answer y, or pass --yes)\n"},
		{"cancel refused too", "", false, []string{"job", "cancel", "a2"}, 2, false,
			"Error: cancel job a2 needs confirmation: stdin is not a terminal, so pass --yes (-y) to cancel job a2 without being asked\n"},
		{"compute delete refused", "", false, []string{"compute", "delete", "gpu"}, 2, false,
			"Error: delete compute gpu needs confirmation: stdin is not a terminal, so pass --yes (-y) to delete compute gpu without being asked\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeJobs(t)
			code, _, stderr := f.cliRun(t, tt.stdin, tt.terminal, tt.args...)
			if code != tt.wantCode || stderr != tt.wantStderr || (len(f.deleted) == 1) != tt.wantDeleted {
				t.Errorf("exit %d, stderr %q, deleted %v; want %d, %q, deleted %v", code, stderr, f.deleted, tt.wantCode, tt.wantStderr, tt.wantDeleted)
			}
		})
	}
}

func TestJobArchivePrintsWhatHappened(t *testing.T) {
	f := newFakeJobs(t)
	code, out, stderr := f.cliRun(t, "", false, "job", "archive", "a1")
	if code != 0 || out != "Archived job a1: job list leaves it out (see it with --archived)\n" {
		t.Errorf("archive: exit %d, %q, %q", code, out, stderr)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr string
	}{
		{"2h", now.Add(-2 * time.Hour), ""},
		{"90m", now.Add(-90 * time.Minute), ""},
		{"3d", now.Add(-72 * time.Hour), ""},
		{"1w", now.Add(-7 * 24 * time.Hour), ""},
		{"2026-03-01T08:00:00Z", time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC), ""},
		{"-2h", time.Time{}, `"-2h" is negative`},
		{"soon", time.Time{}, `"soon" is neither a duration`},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, now)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseSince(%q) = %v, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &out}
		root := newRoot(env)
		root.SetOut(&out)
		root.SetArgs(args)
		if code := Execute(t.Context(), root, &out); code != 0 || out.String() != "hangar "+Version+"\n" {
			t.Errorf("hangar %v: exit %d, %q", args, code, out.String())
		}
	}
}

// On a real terminal (a pty) the question is asked and the answer read.
func TestConfirmOnARealTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var errOut bytes.Buffer
	env := &Env{Stderr: &errOut, Stdin: tty}
	if _, err := ptmx.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	if err := env.confirm(false, "Delete job a1?", "delete job a1"); err != nil || errOut.String() != "Delete job a1? [y/N] " {
		t.Errorf("confirm on a terminal = %v, asked %q", err, errOut.String())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // never written: reading it would hang, so refusing must not read it
	env = &Env{Stderr: &errOut, Stdin: r}
	if err := env.confirm(false, "Delete job a1?", "delete job a1"); err == nil || !strings.Contains(err.Error(), "stdin is not a terminal") {
		t.Errorf("confirm on a pipe = %v, want a refusal", err)
	}
}

func TestCompletion(t *testing.T) {
	f := newFakeJobs(t)
	code, out, stderr := f.cliRun(t, "", false, "__complete", "job", "show", "a1")
	if code != 0 || !strings.HasPrefix(out, "a1\n:4\n") {
		t.Errorf("complete job names: exit %d, %q, %q", code, out, stderr)
	}
	code, out, _ = f.cliRun(t, "", false, "completion", "bash")
	if code != 0 || !strings.Contains(out, "__start_hangar") {
		t.Errorf("completion bash: exit %d, %.200q", code, out)
	}
}
