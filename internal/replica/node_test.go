package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/store/pgtest"
	"github.com/hangar-ml/hangar/internal/testwait"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// server is one server of the test's workspace: a Node served over HTTP, whose leader answers
// with its name.
type server struct {
	name   string
	node   *Node
	http   *httptest.Server
	cancel context.CancelFunc
	done   chan error
	led    chan struct{}
	// leadCtx is what Lead was given: the leader's loops run under it.
	leadCtx context.Context
}

func startServer(t *testing.T, dsn, name string) *server {
	t.Helper()
	return startServerAt(t, dsn, name, time.Now)
}

// startServerAt starts a server whose clock is now.
func startServerAt(t *testing.T, dsn, name string, now func() time.Time) *server {
	t.Helper()
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := &server{name: name, http: httptest.NewUnstartedServer(nil), done: make(chan error, 1), led: make(chan struct{})}
	s.node, err = New(Config{Store: st, URL: "http://" + s.http.Listener.Addr().String(), Beat: 50 * time.Millisecond,
		Secret: func(context.Context) ([]byte, error) { return []byte("workspace secret"), nil },
		Lead: func(ctx context.Context) (http.Handler, error) {
			s.leadCtx = ctx
			close(s.led)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/health" {
					_ = json.NewEncoder(w).Encode(api.Health{OK: true})
					return
				}
				_, _ = io.WriteString(w, "answered by "+name)
			}), nil
		},
		Now: now, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s.http.Config.Handler = s.node
	s.http.Start()
	t.Cleanup(s.http.Close)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- s.node.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-s.done })
	return s
}

func (s *server) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(s.http.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Two servers on one database: the first leads and answers; the second follows, says so on its
// own health check and forwards everything else to the leader; when the leader stops, the second
// takes the lead and answers itself.
func TestNodesLeadFollowAndTakeOver(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a := startServer(t, dsn, "a")
	<-a.led
	b := startServer(t, dsn, "b")
	testwait.For(t, "b to know a leads", func() bool { _, l := b.node.Role(); return l == a.node.cfg.URL })
	if role, _ := b.node.Role(); role != "follower" {
		t.Fatalf("b is %s", role)
	}
	var h api.Health
	if _, body := b.get(t, "/api/health"); json.Unmarshal([]byte(body), &h) != nil || h.Role != "follower" || h.Leader != a.node.cfg.URL {
		t.Errorf("b's health: %s", body)
	}
	if code, body := b.get(t, "/api/jobs"); code != http.StatusOK || body != "answered by a" {
		t.Errorf("through b: %d %q", code, body)
	}
	testwait.For(t, "a to hand nodes both servers, itself first", func() bool {
		return a.node.NodeURLs() == a.node.cfg.URL+","+b.node.cfg.URL
	})
	if err := a.leadCtx.Err(); err != nil {
		t.Fatalf("the leader's loops were stopped while it leads: %v", err)
	}

	a.cancel()
	if err := <-a.done; err != nil {
		t.Fatalf("a stopping: %v", err)
	}
	if a.leadCtx.Err() == nil {
		t.Error("a stopped leading and its loops' context is still live")
	}
	a.done <- nil // for the cleanup
	select {
	case <-b.led:
	case <-time.After(10 * time.Second):
		t.Fatal("b did not take the lead after a stopped")
	}
	testwait.For(t, "b to answer as the leader", func() bool { _, body := b.get(t, "/api/jobs"); return body == "answered by b" })
	testwait.For(t, "b to say it leads", func() bool {
		role, leader := b.node.Role()
		return role == "leader" && leader == b.node.cfg.URL
	})
}

// Servers whose clocks disagree by hours (no NTP) still agree on who leads: the records are
// timed by the database's clock. A leader an hour behind and a follower an hour ahead: the
// follower sees the leader live and forwards to it; the leader hands nodes both servers.
func TestServersWhoseClocksDisagree(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a := startServerAt(t, dsn, "a", func() time.Time { return time.Now().Add(-time.Hour) })
	<-a.led
	b := startServerAt(t, dsn, "b", func() time.Time { return time.Now().Add(time.Hour) })
	testwait.For(t, "b to know a leads", func() bool { _, l := b.node.Role(); return l == a.node.cfg.URL })
	if code, body := b.get(t, "/api/jobs"); code != http.StatusOK || body != "answered by a" {
		t.Errorf("through b: %d %q", code, body)
	}
	testwait.For(t, "a to hand nodes both servers", func() bool {
		return a.node.NodeURLs() == a.node.cfg.URL+","+b.node.cfg.URL
	})
}

// A leader whose database session ends (cut, or the database restarted) cannot know whether it
// still leads: Run returns an error, for the process to end with its loops.
func TestLeaderThatLosesItsSessionStops(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	a := startServer(t, dsn, "a")
	<-a.led
	db, err := sql.Open("pgx", dsn) // another client of the database, as an operator's psql
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// This database's leader only: the e2e suite's servers hold the same key in theirs.
	if _, err := db.ExecContext(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE locktype = 'advisory' AND ((classid::bigint << 32) | objid::bigint) = $1
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, int64(0x6c6561646572)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.done:
		if err == nil {
			t.Fatal("Run returned no error after losing the lead")
		}
		a.done <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("the leader kept going without its session")
	}
}

// A request that reaches a server while it builds its leader (it has announced itself: a client
// found it in server.json) waits for the leader's handler instead of being forwarded to the
// leader on record, which for a workspace's first server is none at all.
func TestRequestsWaitWhileTakingTheLead(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	building, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewUnstartedServer(nil)
	n, err := New(Config{Store: st, URL: "http://" + srv.Listener.Addr().String(), Beat: 20 * time.Millisecond,
		Secret: func(context.Context) ([]byte, error) { return []byte("s"), nil },
		Lead: func(ctx context.Context) (http.Handler, error) {
			close(building)
			<-release
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "the leader") }), nil
		},
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = n
	srv.Start()
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-building
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/api/jobs")
		if err != nil {
			answer <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answer <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	select {
	case a := <-answer:
		t.Fatalf("answered while the leader was being built: %s", a)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if a := <-answer; a != "200 the leader" {
		t.Errorf("the request that waited got %q", a)
	}
}
