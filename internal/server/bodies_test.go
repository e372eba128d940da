package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// send makes a request with a body of size bytes (declared; -1: sent chunked, length unknown)
// and returns the status and error body. Go's client reads an answer that comes before the
// body is sent whole, as a 413 does.
func (ts *testServer) send(t testing.TB, token, method, path string, body []byte, declare bool) (int, api.ErrorBody) {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	if !declare {
		r = io.MultiReader(r) // hides the length: chunked
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ts.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if !declare {
		req.ContentLength = -1
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		if err := json.Unmarshal(b, &eb); err != nil {
			t.Errorf("%s %s: error body is not JSON: %q", method, path, b)
		}
	}
	return resp.StatusCode, eb
}

// hashList is a missing-blobs question for n distinct hashes.
func hashList(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"hashes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%064x"`, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// Every route has a body limit: a body over it gets 413 with a message naming the route and the
// limit, whether its length is declared or not, whoever sends it.
func TestBodyLimits(t *testing.T) {
	ts := newTestServer(t)
	ts.srv.cfg.MaxBlobBytes = 1 << 20
	// The agents' routes exist only on a server with clusters (see
	// TestAgentRoutesWithoutClustersReadNoBody): enable them, as `hangar server` does.
	ts.srv.cfg.Clusters = &cluster.Backend{Store: ts.store,
		Agents: &cluster.Dispatcher{Store: ts.store, Key: []byte("run key"), Runs: ts.ctrl}}
	ts.createJob(t, "r")
	run := ts.ctrl.RunToken("r")
	pad := func(n int) []byte { return bytes.Repeat([]byte(" "), n) } // valid JSON whitespace, any size
	blobPath := "/api/blobs/" + strings.Repeat("ab", 32)
	tests := []struct {
		name, token, method, path string
		body                      []byte
		declare                   bool
		want                      string // in the message
	}{
		{"missing list, declared", adminToken, "POST", "/api/blobs/missing", pad(9 << 20), true,
			"request body too large: POST /api/blobs/missing takes at most 8 MiB, this one has 9 MiB"},
		{"missing list, chunked, run token", run, "POST", "/api/blobs/missing", pad(9 << 20), false,
			"request body too large: POST /api/blobs/missing takes at most 8 MiB"},
		{"missing list of empty strings", run, "POST", "/api/blobs/missing",
			[]byte(`{"hashes":[` + strings.Repeat(`"",`, 140_000) + `""]}`), true,
			"POST /api/blobs/missing takes at most 131072 JSON values, this one has 140003"},
		{"job", adminToken, "POST", "/api/jobs", pad(2 << 20), true, "POST /api/jobs takes at most 1 MiB, this one has 2 MiB"},
		{"log batch", run, "POST", "/api/runs/r/logs", pad(9 << 20), false, "POST /api/runs/{id}/logs takes at most 8 MiB"},
		{"log batch of empty lines", run, "POST", "/api/runs/r/logs",
			[]byte(`{"lines":[` + strings.Repeat(`{},`, 40_000) + `{}]}`), true, "takes at most 32768 JSON values"},
		{"agent join, no token", "", "POST", "/api/agents/join", pad(2 << 20), false, "POST /api/agents/join takes at most 256 KiB"},
		{"a GET", adminToken, "GET", "/api/jobs", pad(2 << 20), true, "GET /api/jobs takes at most 1 MiB"},
		{"blob, declared", run, "PUT", blobPath, pad(2 << 20), true,
			"PUT /api/blobs/{hash} takes at most 1 MiB, this one has 2 MiB"},
		{"blob, chunked", adminToken, "PUT", blobPath, pad(2 << 20), false, "PUT /api/blobs/{hash} takes at most 1 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, eb := ts.send(t, tt.token, tt.method, tt.path, tt.body, tt.declare)
			if st != http.StatusRequestEntityTooLarge || eb.Code != api.CodeTooLarge || !strings.Contains(eb.Error, tt.want) {
				t.Errorf("got %d %q %q, want 413 with %q", st, eb.Code, eb.Error, tt.want)
			}
			tmpEmpty(t, ts.blobs)
		})
	}
}

// A server without clusters answers the agents' routes 404 without reading the body: an
// oversized body sent without a declared length (which the body limit would refuse once read)
// gets the 404, which costs the server nothing to say.
func TestAgentRoutesWithoutClustersReadNoBody(t *testing.T) {
	ts := newTestServer(t)
	st, eb := ts.send(t, "", "POST", "/api/agents/join", bytes.Repeat([]byte(" "), 2<<20), false)
	if st != http.StatusNotFound || eb.Code != api.CodeNotFound || !strings.Contains(eb.Error, "clusters are not enabled") {
		t.Errorf("got %d %q %q, want 404 \"clusters are not enabled on this server\"", st, eb.Code, eb.Error)
	}
}

// What clients really send passes: the 100,000 hashes of a big tree in one question (the CLI
// asks 5000 at a time), a log batch of 2000 lines of control bytes (JSON escapes each in 6).
func TestBodyLimitsLetRealUseThrough(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ts.report(t, "r", job.Running, nil)
	hashes := hashList(100_000)
	st, eb := ts.send(t, ts.ctrl.RunToken("r"), "POST", "/api/blobs/missing", hashes, true)
	if st != http.StatusOK {
		t.Errorf("missing list of 100,000 hashes (%d bytes) = %d %q", len(hashes), st, eb.Error)
	}
	var b api.LogBatch
	text := strings.Repeat("\x01", 512) // 2000 × 512 B = 1 MB, the supervisor's most
	for i := 1; i <= 2000; i++ {
		b.Lines = append(b.Lines, job.LogLine{Seq: int64(i), Text: text, Time: time.Now().UTC()})
	}
	ack, err := ts.runClient("r").Runs.ShipLogs(t.Context(), "r", b)
	if err != nil || ack.Acked != 2000 {
		t.Errorf("log batch of 2000 escaped lines: ack %+v, %v", ack, err)
	}
}

// A body that stalls is dropped after the body timeout, and its temp file with it; before,
// a client that stopped sending held a connection and a temp file forever.
func TestStalledBodyIsDropped(t *testing.T) {
	ts := newTestServer(t)
	ts.srv.cfg.BodyTimeout = 300 * time.Millisecond
	tests := []struct {
		name, method, path string
		want               string
	}{
		{"upload", "PUT", "/api/blobs/" + strings.Repeat("ab", 32), "PUT /api/blobs/{hash} received nothing for 300ms"},
		{"JSON", "POST", "/api/blobs/missing", "POST /api/blobs/missing takes its whole body within 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 1000000\r\n\r\n",
				tt.method, tt.path, adminToken)
			if _, err := conn.Write(bytes.Repeat([]byte(" "), 300_000)); err != nil {
				t.Fatal(err)
			}
			if tt.method == "PUT" {
				testwait.For(t, "the upload's temp file", func() bool { return tmpCount(t, ts.blobs) > 0 })
			}
			// Then nothing more: the server answers 408 and closes.
			_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer to a stalled body: %v", err)
			}
			var eb api.ErrorBody
			_ = json.NewDecoder(resp.Body).Decode(&eb)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(eb.Error, tt.want) {
				t.Errorf("got %d %q, want 408 with %q", resp.StatusCode, eb.Error, tt.want)
			}
			testwait.For(t, "blobs/tmp to be empty", func() bool { return tmpCount(t, ts.blobs) == 0 })
		})
	}
}

// The body timeout is no request timeout: an upload that keeps moving takes as long as it
// needs, and a long poll (no body) waits its full time.
func TestBodyTimeoutSparesSlowUploadsAndLongPolls(t *testing.T) {
	ts := newTestServer(t)
	ts.srv.cfg.BodyTimeout = time.Second
	data := bytes.Repeat([]byte("slow but steady "), 1000)
	hash, _, err := blob.HashReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < len(data); i += len(data) / 25 { // 25 pieces, 100 ms apart: 2.5 s in all
			time.Sleep(100 * time.Millisecond)
			if _, err := pw.Write(data[i:min(i+len(data)/25, len(data))]); err != nil {
				return
			}
		}
		pw.Close()
	}()
	if err := ts.admin.Blobs.Put(t.Context(), hash, pr, int64(len(data))); err != nil {
		t.Fatalf("a slow upload that keeps moving: %v", err)
	}
	ts.createJob(t, "r")
	resp, err := ts.admin.Jobs.Logs(t.Context(), "r", "", 0, 2*time.Second) // twice the body timeout
	if err != nil || resp.Done {
		t.Fatalf("long poll of a quiet run = %+v, %v; want an empty answer after its wait", resp, err)
	}
}

// A request refused before its body is read takes no share of the memory budget: with the
// budget all held, a bad token is still answered at once.
func TestRefusedRequestsTakeNoBudget(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	release, err := ts.srv.budget.reserve(t.Context(), BodyMemoryBudget)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	body := []byte(`{"hashes":[]}`)
	if st, eb := ts.send(t, "forged", "POST", "/api/blobs/missing", body, true); st != http.StatusUnauthorized {
		t.Errorf("bad token = %d %q, want 401", st, eb.Error)
	}
	if st, eb := ts.send(t, ts.ctrl.RunToken("r"), "POST", "/api/jobs", body, true); st != http.StatusForbidden {
		t.Errorf("run token on an admin route = %d %q, want 403", st, eb.Error)
	}
}

func TestBudget(t *testing.T) {
	b := newBudget(100, 50*time.Millisecond)
	ctx := t.Context()
	release, err := b.reserve(ctx, 1000) // more than the budget: all of it
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.reserve(ctx, 1)
	var be *busyError
	if !errors.As(err, &be) {
		t.Fatalf("reserve while the budget is held = %v, want busyError", err)
	}
	release()
	release() // a second release gives nothing back twice
	r1, err := b.reserve(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.reserve(ctx, 40)
	if err != nil {
		t.Fatalf("after release, the budget's rest: %v", err)
	}
	r1()
	r2()
}

// A full disk is a 507 saying where; the body errors have their own codes.
func TestErrorStatuses(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		want     int
		wantCode string
		wantMsg  string
	}{
		{"blob store full", fmt.Errorf("put blob x: %w", &blob.NoSpaceError{Dir: "/ws/blobs", Err: syscall.ENOSPC}),
			507, api.CodeNoSpace, "no space left on device: writing blob to /ws/blobs (the workspace's disk is full)"},
		{"quota", &os.PathError{Op: "write", Path: "/ws/x", Err: syscall.EDQUOT},
			507, api.CodeNoSpace, "no space left on device (the workspace's disk is full)"},
		{"too large", &tooLargeError{route: "POST /x", limit: 1 << 20, size: 3 << 19}, 413, api.CodeTooLarge,
			"request body too large: POST /x takes at most 1 MiB, this one has 1.5 MiB"},
		{"slow", &slowBodyError{route: "PUT /y", timeout: time.Minute, stream: true}, 408, api.CodeTimeout,
			"request body too slow: PUT /y received nothing for 1m0s"},
		{"cut", &brokenBodyError{route: "PUT /z", err: io.ErrUnexpectedEOF}, 400, api.CodeInvalid,
			"request body of PUT /z cut short: unexpected EOF"},
		{"busy", &busyError{budget: 64 << 20, wait: 30 * time.Second}, 503, api.CodeBusy, "server busy"},
		{"unknown", errors.New("secret detail"), 500, api.CodeInternal, "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			writeError(&statusRecorder{ResponseWriter: rec, workspace: "/ws"}, discardLog, tt.err)
			var eb api.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tt.want || eb.Code != tt.wantCode || !strings.HasPrefix(eb.Error, tt.wantMsg) {
				t.Errorf("got %d %q %q, want %d %q %q", rec.Code, eb.Code, eb.Error, tt.want, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestSizeIEC(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 8 << 20: "8 MiB", 61_000_000: "58.2 MiB", 64 << 30: "64 GiB",
	} {
		if got := sizeIEC(n); got != want {
			t.Errorf("sizeIEC(%d) = %q, want %q", n, got, want)
		}
	}
}

var discardLog = slog.New(slog.DiscardHandler)

func tmpCount(t testing.TB, s *blob.Store) int {
	t.Helper()
	des, err := os.ReadDir(s.Dir() + "/tmp")
	if err != nil {
		t.Fatal(err)
	}
	return len(des)
}

func tmpEmpty(t testing.TB, s *blob.Store) {
	t.Helper()
	if n := tmpCount(t, s); n > 0 {
		t.Errorf("%d temp files left in blobs/tmp", n)
	}
}
