package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/provider"
	commandprovider "github.com/hangar-ml/hangar/internal/provider/command"
	localprovider "github.com/hangar-ml/hangar/internal/provider/local"
	"github.com/hangar-ml/hangar/internal/replica"
	"github.com/hangar-ml/hangar/internal/server"
	"github.com/hangar-ml/hangar/internal/store"
)

// serve runs the workspace server for a workspace directory until ctx ends. On SQLite it is the
// workspace's only server (the home's lock); on PostgreSQL it is one of the workspace's servers
// (design 0020): it leads, or follows the one that does until it can take the lead.
func serve(ctx context.Context, o cli.ServeOptions) error {
	log := o.Log.With("component", "server")
	h := home.Home{Dir: o.Home, Database: o.Database}
	if err := h.Ensure(); err != nil {
		return err
	}
	replicated := h.Database != ""
	if !replicated {
		release, err := h.Lock()
		if err != nil {
			return err
		}
		defer release()
	}
	st, err := h.OpenStore(ctx) // refuses a lost, foreign or damaged database, naming it
	if err != nil {
		return err
	}
	defer st.Close()
	// The database's credentials are the server's alone: pgx read them when the store opened, and
	// no child (supervisor, run, agent, provider hook) inherits them from here on.
	for _, k := range []string{home.DatabaseEnv, "PGPASSWORD"} {
		os.Unsetenv(k)
	}
	l, err := listen(h, o, log) // listen.go: the address, TLS or why not
	if err != nil {
		return err
	}
	ws := &leading{h: h, o: o, log: log, st: st, l: l, url: func() string { return l.url }}
	if l.cert != nil {
		ws.ca = l.cert.PEM
	}
	if !replicated {
		hd, err := ws.lead(ctx)
		if err != nil {
			return err
		}
		return ws.serveHTTP(ctx, hd, nil)
	}
	self := l.url
	if o.AdvertiseURL != "" {
		self = o.AdvertiseURL
	}
	var node *replica.Node
	node, err = replica.New(replica.Config{Store: st, URL: self, CA: ws.ca, Workspace: h.Dir,
		Secret: func(ctx context.Context) ([]byte, error) { return readRunTokenKey(ctx, st) },
		Lead: func(ctx context.Context) (http.Handler, error) {
			ws.url, ws.servers, ws.role = node.NodeURLs, node.NodeURLs, node.Role
			return ws.lead(ctx)
		},
		Log: o.Log.With("component", "replica")})
	if err != nil {
		return err
	}
	log.Info("one of the workspace's servers: following until it can lead", "url", self, "home", h.Dir,
		"database", home.RedactURL(h.Database))
	return ws.serveHTTP(ctx, node, node.Run)
}

// leading is what a server needs to lead its workspace.
type leading struct {
	h   home.Home
	o   cli.ServeOptions
	log *slog.Logger
	st  *store.Store
	l   *listening
	ca  []byte // what every supervisor and agent trusts: the certificate served
	// url is the servers' address(es) for new agents; on a replicated workspace, servers lists
	// them for run specs and heartbeat replies, and role says this server's role for the health
	// check (both nil on SQLite).
	url     func() string
	servers func() string
	role    func() (string, string)
	// release drops the home's server lock taken by a leader of a replicated workspace.
	release func()
	// stopping is what a planned stop of the workspace's only server does while it still
	// serves (stopIdleAgents, lead.go); nil until it leads.
	stopping func(context.Context)
}

// stopGrace bounds what a planned stop does before the listener closes: the idle agents of this
// machine stopping (each leaves at once; `hangar server stop` waits 30 s in all).
const stopGrace = 10 * time.Second

// serveHTTP serves hd on the listener until ctx ends or run (when given) returns; run's context
// ends after the listener closed, and serveHTTP waits for it (a leader releases its lock).
func (ws *leading) serveHTTP(ctx context.Context, hd http.Handler, run func(context.Context) error) error {
	hs := server.HTTPServer(hd)
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(ws.l.ln) }()
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		if run != nil {
			if err := run(rctx); err != nil {
				errc <- err
			}
		}
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		// A planned stop (SIGTERM): on SQLite the controllers ended with ctx already.
		if run == nil {
			ws.stopIdle(ctx)
		}
	}
	ws.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	stop()
	select {
	case <-ran:
	case <-sctx.Done():
	}
	if run != nil && ctx.Err() != nil {
		// A replicated workspace's leader, its controllers now ended (they would provision
		// again what the stop deletes).
		ws.stopIdle(ctx)
	}
	if ws.release != nil { // this server led a replicated workspace
		ws.release()
	}
	if ws.release != nil || run == nil {
		_ = os.Remove(ws.h.PIDFile())
	}
	return err
}

// stopIdle is a planned stop's work on the workspace's only server (stopping); while a
// replicated workspace has other live servers, they take over what this one ran, agents
// included.
func (ws *leading) stopIdle(ctx context.Context) {
	if ws.stopping == nil || !ws.alone() {
		return
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer cancel()
	ws.stopping(gctx)
}

// alone reports whether this is the workspace's only live server: always on SQLite; on a
// replicated workspace, when the servers' records name no other.
func (ws *leading) alone() bool {
	return ws.servers == nil || !strings.Contains(ws.servers(), ",")
}

// endpointMaxBody bounds a request to an online endpoint.
const endpointMaxBody = 16 << 20

// workspaceID names this workspace where others may see its objects (the Kubernetes Jobs of two
// workspaces in one namespace): random, made on first start.
func workspaceID(ctx context.Context, st *store.Store) (string, error) {
	v, ok, err := st.Setting(ctx, "workspace_id")
	if err != nil || ok {
		return v, err
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), st.SetSetting(ctx, "workspace_id", hex.EncodeToString(b))
}

// runTokenKey is the workspace secret that run tokens derive from, made on first start.
func runTokenKey(ctx context.Context, st *store.Store) ([]byte, error) {
	if b, err := readRunTokenKey(ctx, st); err != nil || b != nil {
		return b, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := st.SetSetting(ctx, "run_token_key", hex.EncodeToString(b)); err != nil {
		return nil, err
	}
	return b, nil
}

// readRunTokenKey is the run tokens' key, nil until the first server made it.
func readRunTokenKey(ctx context.Context, st *store.Store) ([]byte, error) {
	v, ok, err := st.Setting(ctx, "run_token_key")
	if err != nil || !ok {
		return nil, err
	}
	return hex.DecodeString(v)
}

// providers returns where each cluster's nodes come from: agents started on this machine (one
// shared local provider, which hands out its GPUs), or the cluster's own create/delete scripts.
func providers(exe, root string, hide []string, log *slog.Logger) func(compute.Spec) (provider.Provider, error) {
	var mu sync.Mutex
	byPool := map[string]provider.Provider{}
	localProv := &localprovider.Provider{Exe: exe, Root: filepath.Join(root, "nodes"), Hide: hide,
		GPUs: gpuIndexes(), Log: log.With("component", "provider/local")}
	return func(s compute.Spec) (provider.Provider, error) {
		if s.Cluster == nil || s.Cluster.Provider.Type == "" || s.Cluster.Provider.Type == compute.ProviderLocal {
			return localProv, nil
		}
		if s.Cluster.Provider.Type != compute.ProviderCommand {
			return nil, fmt.Errorf("unknown provider %q", s.Cluster.Provider.Type)
		}
		mu.Lock()
		defer mu.Unlock()
		p, ok := byPool[s.Name]
		if !ok || p.(*commandprovider.Provider).Spec.Create != s.Cluster.Provider.Create {
			p = &commandprovider.Provider{Spec: s.Cluster.Provider, Hide: hide, Log: log.With("component", "provider/command", "pool", s.Name)}
			byPool[s.Name] = p
		}
		return p, nil
	}
}

// gpuIndexes lists this machine's GPUs for the local provider to share out.
func gpuIndexes() []int {
	var out []int
	for _, g := range node.DetectGPUs(context.Background()) {
		out = append(out, g.Index)
	}
	return out
}

// oidcConfig is the studio's OpenID Connect login, nil when --oidc-issuer is not given.
func oidcConfig(o cli.OIDCOptions) *server.OIDC {
	if o.Issuer == "" {
		return nil
	}
	return &server.OIDC{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: o.RedirectURL}
}
