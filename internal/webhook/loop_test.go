package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/secrets"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/testwait"
)

const testSecret = "whsec-test"

// receiver is a webhook's receiving end, which checks each request as MLflow's documentation
// tells a receiver to (mlflow docs "Webhooks", verifying signatures): "v1," and the base64
// HMAC-SHA256 of "<X-MLflow-Delivery-Id>.<X-MLflow-Timestamp>.<raw body>" under the shared
// secret, compared in constant time, and a timestamp no older than five minutes. It answers
// 503 while fail is above zero (counting down), else 200.
type receiver struct {
	t    *testing.T
	mu   sync.Mutex
	fail int
	got  []received
}

type received struct {
	ID, Entity, Action string
	Data               map[string]any
	Status             int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id, ts, sig := r.Header.Get("X-MLflow-Delivery-Id"), r.Header.Get("X-MLflow-Timestamp"), r.Header.Get("X-MLflow-Signature")
	if !verifyAsMLflowDocs(body, sig, testSecret, id, ts) {
		rc.t.Errorf("bad signature %q on delivery %s", sig, id)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
		rc.t.Errorf("a delivery carries credentials: %v", r.Header)
	}
	var env struct {
		Entity, Action, Timestamp string
		Data                      map[string]any
	}
	if err := json.Unmarshal(body, &env); err != nil {
		rc.t.Errorf("body %s: %v", body, err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	st := http.StatusOK
	if rc.fail > 0 {
		rc.fail--
		st = http.StatusServiceUnavailable
	}
	rc.got = append(rc.got, received{ID: id, Entity: env.Entity, Action: env.Action, Data: env.Data, Status: st})
	w.WriteHeader(st)
}

func verifyAsMLflowDocs(payload []byte, signature, secret, deliveryID, timestamp string) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)) > 5*time.Minute {
		return false
	}
	sigB64, ok := strings.CutPrefix(signature, "v1,")
	if !ok {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(deliveryID + "." + timestamp + "." + string(payload)))
	expected := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(sigB64), []byte(expected))
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// workspace is a store and its key on disk, opened again after a "restart".
type workspace struct {
	t         *testing.T
	db, key   string
	st        *store.Store
	box       *secrets.Box
	stopLoop  context.CancelFunc
	loopEnded chan struct{}
}

func newWorkspace(t *testing.T) *workspace {
	dir := t.TempDir()
	w := &workspace{t: t, db: filepath.Join(dir, "ws.db"), key: filepath.Join(dir, "secret.key")}
	w.open()
	return w
}

func (w *workspace) open() {
	st, err := store.Open(w.t.Context(), w.db)
	if err != nil {
		w.t.Fatal(err)
	}
	box, err := secrets.OpenBox(w.key)
	if err != nil {
		w.t.Fatal(err)
	}
	w.st, w.box = st, box
}

// startLoop runs the delivery loop as the server does, on a fast policy.
func (w *workspace) startLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stopLoop, w.loopEnded = cancel, make(chan struct{})
	l := NewLoop(LoopConfig{Store: w.st.Webhooks, Sealer: w.box, Sender: NewSender(2 * time.Second),
		Policy: Policy{MaxAttempts: 5, Base: 20 * time.Millisecond, Max: 100 * time.Millisecond},
		Jitter: func(time.Duration) time.Duration { return 0 }, Every: 10 * time.Millisecond})
	go func() {
		defer close(w.loopEnded)
		l.Run(ctx)
	}()
}

// stop ends the loop and closes the store: the server stops.
func (w *workspace) stop() {
	if w.stopLoop != nil {
		w.stopLoop()
		<-w.loopEnded
		w.stopLoop = nil
	}
	w.st.Close()
}

func (w *workspace) hook(url string) *store.Webhook {
	svc := &Service{Store: w.st.Webhooks, Sealer: w.box, Sender: NewSender(0)}
	h, err := svc.Create(w.t.Context(), Spec{Name: "ci", URL: url, Secret: testSecret,
		Events: []string{store.EventModelVersionAliasCreated, store.EventRegisteredModelCreated}})
	if err != nil {
		w.t.Fatal(err)
	}
	if strings.Contains(h.Secret, testSecret) {
		w.t.Fatalf("the secret is stored in the clear: %q", h.Secret)
	}
	return h
}

// versions registers versions 1..n of a model (no webhook here subscribes to their event).
func (w *workspace) versions(name string, n int) {
	for range n {
		if _, err := w.st.Assets.CreateModel(w.t.Context(), model.Version{Name: name, Manifest: "m", Source: model.SourceLocal, CreatedAt: time.Now()}); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *workspace) delivery(id string) store.Delivery {
	ds, err := w.st.Webhooks.Deliveries(w.t.Context(), id)
	if err != nil || len(ds) != 1 {
		w.t.Fatalf("deliveries of %s = %+v, %v", id, ds, err)
	}
	return ds[0]
}

// A registry write reaches the receiver signed as MLflow signs; a receiver that fails twice
// gets the same delivery a third time, which it takes, and the store says so.
func TestADeliveryIsRetriedUntilTheReceiverTakesIt(t *testing.T) {
	rc := &receiver{t: t, fail: 2}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	w := newWorkspace(t)
	defer w.stop()
	h := w.hook(srv.URL + "/hook")
	w.startLoop()
	w.versions("iris", 3) // an alias names a version that is there
	if err := w.st.Assets.SetModelAlias(t.Context(), store.ModelAlias{Name: "iris", Alias: "champion", Version: "3"}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the delivery to be delivered", func() bool { return w.delivery(h.ID).State == store.DeliveryDelivered })
	d := w.delivery(h.ID)
	got := rc.requests()
	if d.Attempts != 3 || d.LastStatus != 200 || len(got) != 3 {
		t.Fatalf("delivery %+v after %d requests; want 3 attempts, the last 200", d, len(got))
	}
	for i, r := range got {
		wantStatus := map[bool]int{true: 503, false: 200}[i < 2]
		if r.ID != d.ID || r.Status != wantStatus || r.Entity != "model_version_alias" || r.Action != "created" ||
			r.Data["name"] != "iris" || r.Data["alias"] != "champion" || r.Data["version"] != "3" {
			t.Errorf("request %d = %+v; want delivery %s, answered %d", i, r, d.ID, wantStatus)
		}
	}
}

// An event accepted before the server stops is delivered after it starts again: one whose
// first attempt failed, and one never tried. Each is taken once.
func TestDeliveriesSurviveARestart(t *testing.T) {
	rc := &receiver{t: t, fail: 1}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	w := newWorkspace(t)
	h := w.hook(srv.URL)
	w.startLoop()
	ctx := t.Context()
	w.versions("iris", 1)
	if err := w.st.Assets.SetModelAlias(ctx, store.ModelAlias{Name: "iris", Alias: "champion", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a first, failed attempt", func() bool { return len(rc.requests()) == 1 })
	w.stopLoop()
	<-w.loopEnded
	w.stopLoop = nil
	// Accepted while no loop runs, then the server stops.
	if err := w.st.Assets.CreateRegisteredModel(ctx, store.RegisteredModel{Name: "wine", Created: time.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	w.stop()

	w.open()
	defer w.stop()
	w.startLoop()
	testwait.For(t, "both deliveries to be delivered", func() bool {
		ds, err := w.st.Webhooks.Deliveries(ctx, h.ID)
		return err == nil && len(ds) == 2 && ds[0].State == store.DeliveryDelivered && ds[1].State == store.DeliveryDelivered
	})
	taken := map[string]int{}
	var events []string
	for _, r := range rc.requests() {
		if r.Status == 200 {
			taken[r.ID]++
			events = append(events, r.Entity+"."+r.Action)
		}
	}
	if len(taken) != 2 {
		t.Errorf("taken = %v; want two deliveries, once each", taken)
	}
	for id, n := range taken {
		if n != 1 {
			t.Errorf("delivery %s taken %d times", id, n)
		}
	}
	// The never-tried one goes first: the other waits out its backoff.
	slices.Sort(events)
	if want := []string{"model_version_alias.created", "registered_model.created"}; !slices.Equal(events, want) {
		t.Errorf("events taken = %v, want %v", events, want)
	}
}
