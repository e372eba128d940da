package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// hookSink is a webhook's receiver that checks every request as MLflow's documentation tells
// receivers to: the signature over "<X-MLflow-Delivery-Id>.<X-MLflow-Timestamp>.<raw body>",
// HMAC-SHA256 under the shared secret, base64 after "v1,", compared in constant time, and a
// timestamp at most five minutes old. It answers 503 to the first fail requests, and to every
// request while down.
type hookSink struct {
	t      *testing.T
	mu     sync.Mutex
	fail   int
	down   bool
	events []sinkEvent
}

type sinkEvent struct {
	id, event string
	data      map[string]any
	status    int
}

const hookSecret = "e2e-hook-secret"

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id, ts := r.Header.Get("X-MLflow-Delivery-Id"), r.Header.Get("X-MLflow-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	sig, ok := strings.CutPrefix(r.Header.Get("X-MLflow-Signature"), "v1,")
	mac := hmac.New(sha256.New, []byte(hookSecret))
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	if err != nil || time.Since(time.Unix(sec, 0)) > 5*time.Minute || !ok ||
		!hmac.Equal([]byte(sig), []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))) {
		h.t.Errorf("a request that does not verify: %v %s", r.Header, body)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var env struct {
		Entity, Action string
		Data           map[string]any
	}
	_ = json.Unmarshal(body, &env)
	h.mu.Lock()
	defer h.mu.Unlock()
	st := http.StatusOK
	if h.down || h.fail > 0 {
		h.fail--
		st = http.StatusServiceUnavailable
	}
	h.events = append(h.events, sinkEvent{id: id, event: env.Entity + "." + env.Action, data: env.Data, status: st})
	w.WriteHeader(st)
}

func (h *hookSink) setDown(down bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.down = down
}

// of lists the requests of one event.
func (h *hookSink) of(event string) []sinkEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []sinkEvent
	for _, e := range h.events {
		if e.event == event {
			out = append(out, e)
		}
	}
	return out
}

// An owner's webhook (made with hangar webhook create, the secret on stdin) hears the real
// server's registry events, signed as MLflow signs them: a
// version `hangar model create` registers reaches a receiver that fails twice on the third try;
// an alias set while the receiver is down, and the server then killed, reaches it after the
// server starts again, as the same delivery.
func TestRegistryWebhooksAreSignedRetriedAndSurviveARestart(t *testing.T) {
	w := newWS(t)
	sink := &hookSink{t: t, fail: 2}
	recv := httptest.NewServer(sink)
	defer recv.Close()
	r := w.runStdin(hookSecret+"\n", "webhook", "create", "--name", "ci", "--url", recv.URL+"/hook", "--secret",
		"--event", "model_version.created", "--event", "model_version_alias.created", "-o", "json")
	var hook api.Webhook
	if err := json.Unmarshal([]byte(r.stdout), &hook); r.code != 0 || err != nil || hook.ID == "" || strings.Contains(r.stdout, hookSecret) {
		t.Fatalf("webhook create: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if list := w.ok("webhook", "list"); !strings.Contains(list.stdout, hook.ID) ||
		!strings.Contains(list.stdout, "model_version.created,model_version_alias.created") || strings.Contains(list.stdout, hookSecret) {
		t.Errorf("webhook list:\n%s", list.stdout)
	}
	// The test route signs as deliveries do: the sink verifies it (its first two answers are 503).
	if test := w.run("webhook", "test", hook.ID, "--event", "model_version_alias.created"); !strings.Contains(test.stdout, "refused: the receiver answered 503") {
		t.Errorf("webhook test: exit %d\n%s%s", test.code, test.stdout, test.stderr)
	}
	sink.mu.Lock()
	sink.fail, sink.events = 2, nil
	sink.mu.Unlock()

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"model/MLmodel": "flavors: {}\n"})
	w.ok("model", "create", "--name", "iris", "--path", filepath.Join(dir, "model"))
	testwait.Within(t, 40*time.Second, "the version's event to be taken", func() bool {
		got := sink.of("model_version.created")
		return len(got) > 0 && got[len(got)-1].status == 200
	})
	got := sink.of("model_version.created")
	if len(got) != 3 || got[0].id != got[2].id || got[1].id != got[2].id || got[2].data["name"] != "iris" || got[2].data["version"] != "1" {
		t.Errorf("model_version.created requests = %+v; want 3 of one delivery, the last taken", got)
	}

	sink.setDown(true)
	if st, out := w.mlflowCall("POST", "registered-models/alias", `{"name": "iris", "alias": "champion", "version": "1"}`); st != 200 {
		t.Fatalf("set the alias = %d %s", st, out)
	}
	testwait.Within(t, 20*time.Second, "a first, failed try of the alias's event", func() bool {
		return len(sink.of("model_version_alias.created")) > 0
	})
	w.killServer()
	sink.setDown(false)
	w.startServer()
	testwait.Within(t, 40*time.Second, "the alias's event to be taken after the restart", func() bool {
		got := sink.of("model_version_alias.created")
		return got[len(got)-1].status == 200
	})
	alias := sink.of("model_version_alias.created")
	if last := alias[len(alias)-1]; last.id != alias[0].id || last.data["alias"] != "champion" || last.data["version"] != "1" {
		t.Errorf("model_version_alias.created requests = %+v; want one delivery, taken after the restart", alias)
	}

	if up := w.ok("webhook", "update", hook.ID, "--disable"); !strings.Contains(up.stdout, "status:      DISABLED") {
		t.Errorf("webhook update --disable:\n%s", up.stdout)
	}
	w.ok("webhook", "delete", hook.ID, "--yes")
	if r := w.run("webhook", "show", hook.ID); r.code == 0 || !strings.Contains(r.stderr, "Webhook with ID "+hook.ID+" not found.") {
		t.Errorf("webhook show after the delete: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// mlflowCall sends one of MLflow's requests with the workspace's token.
func (w *ws) mlflowCall(method, path, body string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequestWithContext(w.t.Context(), method, w.url()+"/api/2.0/mlflow/"+path, strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+w.adminToken())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
