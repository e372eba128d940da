package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/secrets"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/testwait"
	"github.com/hangar-ml/hangar/internal/webhook"
)

// hookReceiver records what reaches a webhook's URL, verified as a receiver verifies it.
type hookReceiver struct {
	mu     sync.Mutex
	bodies []map[string]any
	bad    int
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if !webhook.Verify("s3cret-value", r.Header.Get("X-MLflow-Delivery-Id"), r.Header.Get("X-MLflow-Timestamp"), b, r.Header.Get("X-MLflow-Signature")) {
		h.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	h.bodies = append(h.bodies, m)
	_, _ = w.Write([]byte("thanks"))
}

func (h *hookReceiver) got() ([]map[string]any, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.bodies...), h.bad
}

// webhookCall sends one of MLflow's webhook requests as an owner; the answer as a map.
func (ts *testServer) webhookCall(t *testing.T, method, path, body string) (int, map[string]any, string) {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ts.url+mlflowapi.Prefix+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, b)
	}
	return resp.StatusCode, out, string(b)
}

// MLflow's webhooks API end to end: create (the secret sealed, never answered), get, list,
// update, test (a signed example), a registry write delivered by the loop, errors in MLflow's
// shape, delete.
func TestMLflowWebhooks(t *testing.T) {
	ts := newTestServer(t)
	box, err := secrets.OpenBox(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	ts.ctrl.Workspace.Sealer = box
	rc := &hookReceiver{}
	recv := httptest.NewServer(rc)
	defer recv.Close()

	st, out, raw := ts.webhookCall(t, "POST", "webhooks", `{"name": "ci", "url": "`+recv.URL+`/hook", "secret": "s3cret-value",
		"events": [{"entity": "REGISTERED_MODEL", "action": "CREATED"}, {"entity": "MODEL_VERSION_ALIAS", "action": "CREATED"}]}`)
	if st != 200 || strings.Contains(raw, "s3cret") {
		t.Fatalf("create = %d %s", st, raw)
	}
	hook := out["webhook"].(map[string]any)
	id := hook["webhook_id"].(string)
	if hook["status"] != "ACTIVE" || hook["name"] != "ci" || len(hook["events"].([]any)) != 2 || hook["creation_timestamp"].(float64) == 0 {
		t.Errorf("created webhook = %v", hook)
	}
	if _, ok := hook["secret"]; ok {
		t.Error("the answer holds the secret")
	}
	stored, err := ts.store.Webhooks.Webhook(t.Context(), id)
	if err != nil || stored.Secret == "" || strings.Contains(stored.Secret, "s3cret") {
		t.Errorf("stored secret = %q, %v; want it sealed", stored.Secret, err)
	}

	if st, out, raw := ts.webhookCall(t, "GET", "webhooks/"+id, ""); st != 200 || out["webhook"].(map[string]any)["url"] != recv.URL+"/hook" || strings.Contains(raw, "s3cret") {
		t.Errorf("get = %d %s", st, raw)
	}
	if st, out, _ := ts.webhookCall(t, "GET", "webhooks?max_results=10", ""); st != 200 || len(out["webhooks"].([]any)) != 1 {
		t.Errorf("list = %d %v", st, out)
	}
	st, out, raw = ts.webhookCall(t, "PATCH", "webhooks/"+id, `{"description": "builds", "status": "DISABLED"}`)
	if up := out["webhook"].(map[string]any); st != 200 || up["status"] != "DISABLED" || up["description"] != "builds" || up["name"] != "ci" || len(up["events"].([]any)) != 2 {
		t.Errorf("update = %d %s", st, raw)
	}
	ts.webhookCall(t, "PATCH", "webhooks/"+id, `{"status": "ACTIVE"}`)

	st, out, raw = ts.webhookCall(t, "POST", "webhooks/"+id+"/test", `{"event": {"entity": "MODEL_VERSION_ALIAS", "action": "CREATED"}}`)
	if res := out["result"].(map[string]any); st != 200 || res["success"] != true || res["response_status"].(float64) != 200 || res["response_body"] != "thanks" {
		t.Errorf("test = %d %s", st, raw)
	}
	if got, bad := rc.got(); bad != 0 || len(got) != 1 || got[0]["entity"] != "model_version_alias" || got[0]["data"].(map[string]any)["alias"] != "example_alias" {
		t.Errorf("the test delivered %v (%d refused)", got, bad)
	}

	// A registry write through MLflow's API, delivered by the loop.
	ctx, cancel := context.WithCancel(context.Background())
	loop := webhook.NewLoop(webhook.LoopConfig{Store: ts.store.Webhooks, Sealer: box, Sender: webhook.NewSender(0), Every: 10 * time.Millisecond})
	done := make(chan struct{})
	go func() { loop.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if st, _ := ts.registryCall(t, adminToken, "POST", "registered-models/create", nil, `{"name": "iris", "description": "flowers"}`); st != 200 {
		t.Fatalf("create registered model = %d", st)
	}
	testwait.For(t, "registered_model.created at the receiver", func() bool { got, _ := rc.got(); return len(got) == 2 })
	got, _ := rc.got()
	if d := got[1]["data"].(map[string]any); got[1]["entity"] != "registered_model" || got[1]["action"] != "created" || d["name"] != "iris" || d["description"] != "flowers" {
		t.Errorf("delivered %v", got[1])
	}

	for _, tc := range []struct{ method, path, body, code, msg string }{
		{"POST", "webhooks", `{"name": "x", "url": "file:///etc/passwd", "events": [{"entity": "MODEL_VERSION", "action": "CREATED"}]}`, "INVALID_PARAMETER_VALUE", "scheme must be http or https"},
		{"POST", "webhooks", `{"name": "x", "url": "https://example.com", "events": [{"entity": "PROMPT", "action": "CREATED"}]}`, "INVALID_PARAMETER_VALUE", "Invalid event 'prompt.created'"},
		{"POST", "webhooks", `{"name": "x", "url": "https://example.com"}`, "INVALID_PARAMETER_VALUE", "'events'"},
		{"GET", "webhooks/nope", "", "RESOURCE_DOES_NOT_EXIST", "Webhook with ID nope not found."},
		{"PATCH", "webhooks/nope", `{"name": "y"}`, "RESOURCE_DOES_NOT_EXIST", "Webhook with ID nope not found."},
	} {
		if st, out, raw := ts.webhookCall(t, tc.method, tc.path, tc.body); st/100 != 4 || out["error_code"] != tc.code || !strings.Contains(out["message"].(string), tc.msg) {
			t.Errorf("%s %s = %d %s; want %s saying %q", tc.method, tc.path, st, raw, tc.code, tc.msg)
		}
	}

	if st, _, raw := ts.webhookCall(t, "DELETE", "webhooks/"+id, ""); st != 200 || raw != "{}\n" {
		t.Errorf("delete = %d %q", st, raw)
	}
	if st, _, _ := ts.webhookCall(t, "GET", "webhooks/"+id, ""); st != 404 {
		t.Errorf("get after the delete = %d, want 404", st)
	}
}
