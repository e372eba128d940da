package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

// mlflowResp is an answer of the MLflow routes.
type mlflowResp struct {
	status int
	header http.Header
	body   []byte
}

func (r mlflowResp) errCode(t testing.TB) string {
	t.Helper()
	var e struct {
		Code string `json:"error_code"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %q is not MLflow's error JSON: %v", r.body, err)
	}
	return e.Code
}

// mlflowDo sends a request as an MLflow client does (the token as a bearer token); target is
// the request target as sent on the wire, escapes and all.
func (ts *testServer) mlflowDo(t testing.TB, token, method, target string, body io.Reader) mlflowResp {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.url+"/", body)
	if err != nil {
		t.Fatal(err)
	}
	// Opaque keeps the target as written: escapes and dot segments reach the server as a
	// client (or an attacker) sends them.
	req.URL.Opaque = target
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultTransport.RoundTrip(req) // no redirects followed
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mlflowResp{status: resp.StatusCode, header: resp.Header, body: b}
}

const artRoot = "/api/2.0/mlflow-artifacts/artifacts/0/"

func listPath(p string) string {
	return "/api/2.0/mlflow-artifacts/artifacts?" + url.Values{"path": {p}}.Encode()
}

func TestMLflowArtifactsUploadListDownloadDelete(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	tok := ts.ctrl.RunToken("r")
	put := func(p, body string) mlflowResp {
		return ts.mlflowDo(t, tok, http.MethodPut, artRoot+"r/artifacts/"+p, strings.NewReader(body))
	}
	for p, body := range map[string]string{"model/weights.bin": "w1", "plots/loss.txt": "0.5", "top.json": "{}"} {
		if r := put(p, body); r.status != http.StatusOK || string(r.body) != "{}\n" {
			t.Fatalf("PUT %s = %d %q", p, r.status, r.body)
		}
	}
	if r := put("model/weights.bin", "w2, longer!"); r.status != http.StatusOK {
		t.Fatalf("re-upload = %d %q", r.status, r.body)
	}
	r := ts.mlflowDo(t, tok, http.MethodGet, listPath("0/r/artifacts"), nil)
	wantList := `{"files":[{"path":"model","is_dir":true},{"path":"plots","is_dir":true},{"path":"top.json","is_dir":false,"file_size":2}]}`
	if r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != wantList {
		t.Errorf("list root = %d %s\nwant %s", r.status, r.body, wantList)
	}
	r = ts.mlflowDo(t, tok, http.MethodGet, listPath("0/r/artifacts/model"), nil)
	if want := `{"files":[{"path":"weights.bin","is_dir":false,"file_size":11}]}`; strings.TrimSpace(string(r.body)) != want {
		t.Errorf("list model = %s, want %s (the re-upload replaced the file)", r.body, want)
	}
	r = ts.mlflowDo(t, tok, http.MethodGet, artRoot+"r/artifacts/model/weights.bin", nil)
	if r.status != http.StatusOK || string(r.body) != "w2, longer!" {
		t.Errorf("download = %d %q", r.status, r.body)
	}
	if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename=weights.bin` {
		t.Errorf("Content-Disposition = %q", cd)
	}
	r = ts.mlflowDo(t, tok, http.MethodDelete, artRoot+"r/artifacts/model", nil)
	if r.status != http.StatusOK {
		t.Fatalf("delete model = %d %q", r.status, r.body)
	}
	if r = ts.mlflowDo(t, tok, http.MethodGet, artRoot+"r/artifacts/model/weights.bin", nil); r.status != http.StatusNotFound ||
		r.errCode(t) != mlflowapi.CodeNotFound {
		t.Errorf("download after delete = %d %q, want 404 RESOURCE_DOES_NOT_EXIST", r.status, r.body)
	}
	// An empty directory lists as {}, as MLflow's JSON leaves out an empty list.
	if r = ts.mlflowDo(t, tok, http.MethodGet, listPath("0/r/artifacts/model"), nil); strings.TrimSpace(string(r.body)) != "{}" {
		t.Errorf("list of a deleted directory = %s, want {}", r.body)
	}
}

// An upload streams to the blob store: a body over the 1 MiB JSON limit goes through.
func TestMLflowArtifactUploadStreams(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	big := bytes.Repeat([]byte("0123456789abcdef"), 256<<10) // 4 MiB
	r := ts.mlflowDo(t, ts.ctrl.RunToken("r"), http.MethodPut, artRoot+"r/artifacts/big.bin", bytes.NewReader(big))
	if r.status != http.StatusOK {
		t.Fatalf("PUT 4 MiB = %d %q", r.status, r.body)
	}
	r = ts.mlflowDo(t, adminToken, http.MethodGet, artRoot+"r/artifacts/big.bin", nil)
	if !bytes.Equal(r.body, big) {
		t.Errorf("download: %d bytes, want the %d uploaded", len(r.body), len(big))
	}
}

func TestMLflowArtifactsAuth(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ts.createJob(t, "other")
	other := ts.ctrl.RunToken("other")
	if r := ts.mlflowDo(t, adminToken, http.MethodPut, artRoot+"r/artifacts/a.txt", strings.NewReader("a")); r.status != http.StatusOK {
		t.Fatalf("workspace token PUT = %d %q", r.status, r.body)
	}
	for _, c := range []struct{ method, target string }{
		{http.MethodPut, artRoot + "r/artifacts/b.txt"},
		{http.MethodGet, artRoot + "r/artifacts/a.txt"},
		{http.MethodDelete, artRoot + "r/artifacts/a.txt"},
		{http.MethodGet, listPath("0/r/artifacts")},
		{http.MethodGet, "/api/2.0/mlflow/artifacts/list?run_id=r"},
		{http.MethodPost, "/api/2.0/mlflow-artifacts/mpu/create/0/r/artifacts/b.txt"},
	} {
		r := ts.mlflowDo(t, other, c.method, c.target, strings.NewReader("x"))
		if r.status != http.StatusForbidden || r.errCode(t) != mlflowapi.CodePermissionDenied {
			t.Errorf("another run's token: %s %s = %d %q, want 403 PERMISSION_DENIED", c.method, c.target, r.status, r.body)
		}
		if r := ts.mlflowDo(t, "", c.method, c.target, strings.NewReader("x")); r.status != http.StatusUnauthorized {
			t.Errorf("no token: %s %s = %d, want 401", c.method, c.target, r.status)
		}
	}
	if r := ts.mlflowDo(t, adminToken, http.MethodGet, artRoot+"r/artifacts/a.txt", nil); string(r.body) != "a" {
		t.Errorf("a.txt after refused calls = %d %q, want it unchanged", r.status, r.body)
	}
	if r := ts.mlflowDo(t, adminToken, http.MethodPut, artRoot+"nosuchrun/artifacts/a.txt", strings.NewReader("a")); r.status != http.StatusNotFound {
		t.Errorf("PUT to a run that does not exist = %d %q, want 404", r.status, r.body)
	}
}

// Paths are data. None of these reaches a file of another run or a path other than the one it
// spells; each is refused with a 4xx (a 3xx is the mux's redirect to the cleaned path, which a
// client must send again, and it is checked there).
func TestMLflowArtifactsPathAttacks(t *testing.T) {
	const victimContent = "TOP-SECRET-CONTENT"
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ts.createJob(t, "victim")
	if r := ts.mlflowDo(t, adminToken, http.MethodPut, artRoot+"victim/artifacts/secret.txt", strings.NewReader(victimContent)); r.status != http.StatusOK {
		t.Fatal(r.status)
	}
	tok := ts.ctrl.RunToken("r")
	targets := []string{
		artRoot + "r/artifacts/../../victim/artifacts/secret.txt",
		artRoot + "r/artifacts/%2e%2e/%2e%2e/victim/artifacts/secret.txt",
		artRoot + "r/artifacts/..%2f..%2fvictim%2fartifacts%2fsecret.txt",
		artRoot + "r/artifacts/a/%2e%2e/b",
		artRoot + "r/artifacts/./a",
		artRoot + "r/artifacts//etc/passwd",
		artRoot + "r/artifacts/%2fetc%2fpasswd",
		artRoot + "r/artifacts/..%5c..%5cvictim%5csecret.txt",
		artRoot + "r/artifacts/a%5cb",
		artRoot + "r/artifacts/a%00b",
		artRoot + "r/artifacts/a%0ab",
		artRoot + "r/artifacts/%ff%fe",
		artRoot + "r/artifacts/" + strings.Repeat("a", mlflowapi.MaxArtifactPath),
		"/api/2.0/mlflow-artifacts/artifacts/0/r/notartifacts/x",
		"/api/2.0/mlflow-artifacts/artifacts/0/r",
	}
	for _, target := range targets {
		for _, method := range []string{http.MethodPut, http.MethodGet, http.MethodDelete} {
			r := ts.mlflowDo(t, tok, method, target, strings.NewReader("pwned"))
			if r.status < 300 || r.status >= 500 || bytes.Contains(r.body, []byte(victimContent)) {
				t.Errorf("%s %s = %d %q, want a 3xx or 4xx", method, target, r.status, r.body)
			}
		}
	}
	for _, p := range []string{"0/r/artifacts/../../victim/artifacts", "0/victim/artifacts", "/0/r/artifacts",
		"0/r/artifacts/a\\..\\..", "0/r/artifacts/a\x00", "0/r", ""} {
		r := ts.mlflowDo(t, tok, http.MethodGet, listPath(p), nil)
		if r.status/100 != 4 || bytes.Contains(r.body, []byte(victimContent)) {
			t.Errorf("list %q = %d %q, want a 4xx", p, r.status, r.body)
		}
	}
	for _, q := range []string{"run_id=victim", "run_id=r&path=../../victim/artifacts", "run_id=r/../victim",
		"run_id=r&path=/etc", "run_id=r&page_token=%21%21"} {
		r := ts.mlflowDo(t, tok, http.MethodGet, "/api/2.0/mlflow/artifacts/list?"+q, nil)
		if r.status/100 != 4 || bytes.Contains(r.body, []byte(victimContent)) {
			t.Errorf("artifacts/list?%s = %d %q, want a 4xx", q, r.status, r.body)
		}
	}
	r := ts.mlflowDo(t, adminToken, http.MethodGet, listPath("0/r/artifacts"), nil)
	if strings.TrimSpace(string(r.body)) != "{}" {
		t.Errorf("run r's artifacts after the attacks = %s, want none", r.body)
	}
	r = ts.mlflowDo(t, adminToken, http.MethodGet, artRoot+"victim/artifacts/secret.txt", nil)
	if string(r.body) != victimContent {
		t.Errorf("the victim's file = %d %q, want it unchanged", r.status, r.body)
	}
}

// putJobArtifacts registers a manifest of files (path → content) as the run's own artifacts.
func (ts *testServer) putJobArtifacts(t testing.TB, run string, files map[string]string) {
	t.Helper()
	m := &snapshot.Manifest{}
	dirs := map[string]bool{}
	for p, content := range files {
		h, err := ts.blobs.PutBytes([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		m.Entries = append(m.Entries, snapshot.Entry{Path: p, Type: snapshot.TypeFile, Hash: h, Size: int64(len(content)), Mode: 0o644})
		if d, _, ok := strings.Cut(p, "/"); ok && !dirs[d] {
			dirs[d] = true
			m.Entries = append(m.Entries, snapshot.Entry{Path: d, Type: snapshot.TypeDir, Mode: 0o755})
		}
	}
	data, _, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	h, err := ts.blobs.PutBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.runClient(run).Runs.ReportArtifacts(t.Context(), run, api.ArtifactsReport{Artifacts: h}); err != nil {
		t.Fatal(err)
	}
}

// A job's own artifacts (outputs/, logs/, user_logs/) list and download through the proxy, as
// mlflow.artifacts.download_artifacts reads them, beside the files its script uploaded; they
// cannot be overwritten or deleted.
func TestMLflowArtifactsShowJobArtifactsReadOnly(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	tok := ts.ctrl.RunToken("r")
	if r := ts.mlflowDo(t, tok, http.MethodPut, artRoot+"r/artifacts/plots/loss.txt", strings.NewReader("0.5")); r.status != http.StatusOK {
		t.Fatal(r.status, string(r.body))
	}
	ts.putJobArtifacts(t, "r", map[string]string{"outputs/model.txt": "weights", "user_logs/std_log.txt": "hello\n"})
	r := ts.mlflowDo(t, tok, http.MethodGet, listPath("0/r/artifacts"), nil)
	want := `{"files":[{"path":"outputs","is_dir":true},{"path":"plots","is_dir":true},{"path":"user_logs","is_dir":true}]}`
	if strings.TrimSpace(string(r.body)) != want {
		t.Errorf("list = %s\nwant %s", r.body, want)
	}
	r = ts.mlflowDo(t, tok, http.MethodGet, listPath("0/r/artifacts/outputs"), nil)
	if want := `{"files":[{"path":"model.txt","is_dir":false,"file_size":7}]}`; strings.TrimSpace(string(r.body)) != want {
		t.Errorf("list outputs = %s, want %s", r.body, want)
	}
	if r = ts.mlflowDo(t, tok, http.MethodGet, artRoot+"r/artifacts/outputs/model.txt", nil); string(r.body) != "weights" {
		t.Errorf("download outputs/model.txt = %d %q", r.status, r.body)
	}
	for _, c := range []struct{ method, rel string }{
		{http.MethodPut, "outputs/model.txt"}, {http.MethodPut, "outputs"}, {http.MethodPut, "outputs/model.txt/x"},
		{http.MethodDelete, "outputs/model.txt"}, {http.MethodDelete, "outputs"}, {http.MethodDelete, ""},
	} {
		target := strings.TrimSuffix(artRoot+"r/artifacts/"+c.rel, "/")
		r := ts.mlflowDo(t, adminToken, c.method, target, strings.NewReader("overwrite"))
		if r.status != http.StatusForbidden || r.errCode(t) != mlflowapi.CodePermissionDenied {
			t.Errorf("%s %q = %d %q, want 403: job artifacts are read-only", c.method, c.rel, r.status, r.body)
		}
	}
	if r = ts.mlflowDo(t, tok, http.MethodGet, artRoot+"r/artifacts/outputs/model.txt", nil); string(r.body) != "weights" {
		t.Errorf("outputs/model.txt after refused writes = %q", r.body)
	}
	if r = ts.mlflowDo(t, tok, http.MethodDelete, artRoot+"r/artifacts/plots", nil); r.status != http.StatusOK {
		t.Errorf("delete of an uploaded directory beside the job's = %d %q", r.status, r.body)
	}
}

func TestMLflowListArtifactsREST(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ts.putJobArtifacts(t, "r", map[string]string{"outputs/model.txt": "weights"})
	for _, p := range []string{"a.txt", "dir/b.txt", "dir/c.txt", "dir/sub/d.txt"} {
		if r := ts.mlflowDo(t, adminToken, http.MethodPut, artRoot+"r/artifacts/"+p, strings.NewReader(p)); r.status != http.StatusOK {
			t.Fatal(r.status, string(r.body))
		}
	}
	r := ts.mlflowDo(t, adminToken, http.MethodGet, "/api/2.0/mlflow/artifacts/list?run_id=r", nil)
	var got mlflowapi.ArtifactsList
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("%d %s: %v", r.status, r.body, err)
	}
	size := int64(5)
	want := mlflowapi.ArtifactsList{RootURI: "mlflow-artifacts:/0/r/artifacts", Files: []mlflowapi.FileInfo{
		{Path: "a.txt", FileSize: &size}, {Path: "dir", IsDir: true}, {Path: "outputs", IsDir: true}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list root (-want +got):\n%s", diff)
	}
	r = ts.mlflowDo(t, adminToken, http.MethodGet, "/api/2.0/mlflow/artifacts/list?run_uuid=r&path=dir", nil)
	if want := `{"root_uri":"mlflow-artifacts:/0/r/artifacts","files":[{"path":"dir/b.txt","is_dir":false,"file_size":9},` +
		`{"path":"dir/c.txt","is_dir":false,"file_size":9},{"path":"dir/sub","is_dir":true}]}`; strings.TrimSpace(string(r.body)) != want {
		t.Errorf("list dir = %s\nwant %s", r.body, want)
	}
}

func TestMLflowListArtifactsPages(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	for i := range mlflowapi.ListPageSize + 5 {
		p := "f" + strings.Repeat("0", 4-len(itoa(i))) + itoa(i)
		if err := ts.store.Tracking.PutMLflowArtifact(t.Context(), storeArtifact("r", p)); err != nil {
			t.Fatal(err)
		}
	}
	var all []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 2 {
			t.Fatal("more pages than the files need")
		}
		r := ts.mlflowDo(t, adminToken, http.MethodGet, "/api/2.0/mlflow/artifacts/list?run_id=r&page_token="+url.QueryEscape(token), nil)
		var page mlflowapi.ArtifactsList
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		for _, f := range page.Files {
			all = append(all, f.Path)
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if len(all) != mlflowapi.ListPageSize+5 || all[0] != "f0000" || all[len(all)-1] != "f1004" {
		t.Errorf("paged through %d files (%v ... ), want %d in order", len(all), all[:min(3, len(all))], mlflowapi.ListPageSize+5)
	}
}

// A multipart upload as MLflow's client sends it (MLFLOW_ENABLE_PROXY_MULTIPART_UPLOAD=true):
// create with the local file's path, PUT each part to its URL with the headers given, complete
// with the ETags; the parts make one file, in order.
func TestMLflowMultipartUpload(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ts.createJob(t, "other")
	tok := ts.ctrl.RunToken("r")
	post := func(token, verb, rel string, body any) mlflowResp {
		b, _ := json.Marshal(body)
		return ts.mlflowDo(t, token, http.MethodPost, "/api/2.0/mlflow-artifacts/mpu/"+verb+"/0/r/artifacts"+rel, bytes.NewReader(b))
	}
	r := post(tok, "create", "/model", map[string]any{"path": "/home/me/big.bin", "num_parts": 3})
	var created struct {
		UploadID    string                    `json:"upload_id"`
		Credentials []mlflowapi.MPUCredential `json:"credentials"`
	}
	if err := json.Unmarshal(r.body, &created); err != nil || r.status != http.StatusOK || len(created.Credentials) != 3 {
		t.Fatalf("create = %d %s", r.status, r.body)
	}
	if r := ts.mlflowDo(t, ts.ctrl.RunToken("other"), http.MethodPut, strings.TrimPrefix(created.Credentials[0].URL, ts.url),
		strings.NewReader("x")); r.status != http.StatusForbidden {
		t.Errorf("a part PUT with another run's token = %d %s, want 403", r.status, r.body)
	}
	chunks := []string{strings.Repeat("a", 2<<20), "bbbb", "cc"} // a part over the 1 MiB JSON limit streams
	var parts []map[string]any
	for i, c := range created.Credentials {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, c.URL, strings.NewReader(chunks[i]))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range c.Headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
			t.Fatalf("part %d = %d, ETag %q", c.PartNumber, resp.StatusCode, resp.Header.Get("ETag"))
		}
		parts = append(parts, map[string]any{"part_number": c.PartNumber, "etag": resp.Header.Get("ETag")})
	}
	bad := append([]map[string]any{parts[1], parts[0]}, parts[2])
	if r := post(tok, "complete", "/model", map[string]any{"path": "/home/me/big.bin", "upload_id": created.UploadID, "parts": bad}); r.status != http.StatusBadRequest {
		t.Errorf("complete with parts out of order = %d %s, want 400", r.status, r.body)
	}
	r = post(tok, "complete", "/model", map[string]any{"path": "/home/me/big.bin", "upload_id": created.UploadID, "parts": parts})
	if r.status != http.StatusOK {
		t.Fatalf("complete = %d %s", r.status, r.body)
	}
	if r := ts.mlflowDo(t, tok, http.MethodGet, artRoot+"r/artifacts/model/big.bin", nil); string(r.body) != strings.Join(chunks, "") {
		t.Errorf("the assembled file = %d, %d bytes", r.status, len(r.body))
	}
	if r := post(tok, "complete", "/model", map[string]any{"path": "big.bin", "upload_id": created.UploadID, "parts": parts}); r.status != http.StatusNotFound {
		t.Errorf("complete again = %d %s, want 404: the upload is gone", r.status, r.body)
	}

	r = post(tok, "create", "", map[string]any{"path": `C:\Users\me\w.bin`, "num_parts": 1})
	if err := json.Unmarshal(r.body, &created); err != nil || r.status != http.StatusOK {
		t.Fatalf("create = %d %s", r.status, r.body)
	}
	if r := post(tok, "abort", "", map[string]any{"path": `C:\Users\me\w.bin`, "upload_id": created.UploadID}); r.status != http.StatusOK {
		t.Errorf("abort = %d %s", r.status, r.body)
	}
	for _, body := range []map[string]any{{"path": "..", "num_parts": 1}, {"path": "x/", "num_parts": 1}, {"path": "x", "num_parts": 0},
		{"path": "x", "num_parts": mlflowapi.MaxParts + 1}} {
		if r := post(tok, "create", "", body); r.status != http.StatusBadRequest {
			t.Errorf("create %v = %d %s, want 400", body, r.status, r.body)
		}
	}
	for _, id := range []string{"../../etc", "00", strings.Repeat("0", 32)} {
		r := ts.mlflowDo(t, tok, http.MethodPut, "/api/2.0/mlflow-artifacts/mpu/part/"+id+"/1", strings.NewReader("x"))
		if r.status/100 != 4 && r.status/100 != 3 {
			t.Errorf("part of upload %q = %d %s, want a 3xx or 4xx", id, r.status, r.body)
		}
	}
}

// Without a workspace folder for parts the server answers as MLflow's does for a store without
// multipart support, with the message on which MLflow 2 clients fall back to one PUT.
func TestMLflowMultipartUnsupported(t *testing.T) {
	ts := newTestServer(t)
	ts.srv.cfg.Workspace = ""
	ts.srv.mlflow = ts.srv.newMLflow() // the API keeps the workspace it was made with
	hs := httptest.NewServer(ts.srv.Handler())
	t.Cleanup(hs.Close)
	ts.url = hs.URL
	ts.createJob(t, "r")
	for _, verb := range []string{"create", "complete", "abort"} {
		r := ts.mlflowDo(t, ts.ctrl.RunToken("r"), http.MethodPost, "/api/2.0/mlflow-artifacts/mpu/"+verb+"/0/r/artifacts",
			strings.NewReader(`{"path":"big.bin","num_parts":3}`))
		var e mlflowapi.Error
		if err := json.Unmarshal(r.body, &e); err != nil || r.status != http.StatusNotImplemented ||
			e.Code != "NOT_IMPLEMENTED" || !strings.HasPrefix(e.Message, "Multipart upload is not supported for the current artifact repository") {
			t.Errorf("mpu/%s = %d %s", verb, r.status, r.body)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func storeArtifact(run, p string) store.MLflowArtifact {
	return store.MLflowArtifact{RunID: run, Path: p, Hash: strings.Repeat("ab", 32), Size: 1, CreatedAt: time.Now()}
}

// The old list's root_uri is the run's artifact_uri as runs/get answers it, experiment included.
func TestMLflowListArtifactsRootIsTheRunsArtifactURI(t *testing.T) {
	ts := newTestServer(t)
	if _, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: "e", ExperimentName: "cifar", Command: "true"}}); err != nil {
		t.Fatal(err)
	}
	uri := at(ts.ok(t, http.MethodGet, "runs/get", url.Values{"run_id": {"e"}}), "run.info.artifact_uri").(string)
	if uri == "mlflow-artifacts:/0/e/artifacts" {
		t.Fatalf("the job's experiment is Default: %s", uri)
	}
	r := ts.mlflowDo(t, adminToken, http.MethodGet, "/api/2.0/mlflow/artifacts/list?run_id=e", nil)
	var got mlflowapi.ArtifactsList
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("%d %s: %v", r.status, r.body, err)
	}
	if got.RootURI != uri {
		t.Errorf("root_uri %q, runs/get's artifact_uri %q", got.RootURI, uri)
	}
}
