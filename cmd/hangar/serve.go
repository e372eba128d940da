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
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/backend"
	clusterbackend "github.com/hangar-ml/hangar/internal/backend/cluster"
	kubebackend "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/local"
	slurmbackend "github.com/hangar-ml/hangar/internal/backend/slurm"
	sshbackend "github.com/hangar-ml/hangar/internal/backend/ssh"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/provider"
	commandprovider "github.com/hangar-ml/hangar/internal/provider/command"
	localprovider "github.com/hangar-ml/hangar/internal/provider/local"
	"github.com/hangar-ml/hangar/internal/replica"
	"github.com/hangar-ml/hangar/internal/secrets"
	"github.com/hangar-ml/hangar/internal/server"
	"github.com/hangar-ml/hangar/internal/serving/router"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
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
}

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
	if ws.release != nil { // this server led a replicated workspace
		ws.release()
	}
	if ws.release != nil || run == nil {
		_ = os.Remove(ws.h.PIDFile())
	}
	return err
}

// lead builds the backends, the controller and the API, starts the controller's loops under ctx
// and returns the API's handler. On a replicated workspace only the leader runs it.
func (ws *leading) lead(ctx context.Context) (http.Handler, error) {
	h, o, log, st, ca, urlFn := ws.h, ws.o, ws.log, ws.st, ws.ca, ws.url
	if ws.role != nil {
		// The home's lock, for the CLI's view of a local server (stop, start): best effort, as
		// a lock on a shared filesystem may outlive a leader on another machine.
		if release, err := h.Lock(); err != nil {
			log.Warn("leading without the workspace directory's server lock", "err", err)
		} else {
			ws.release = release
		}
	}
	blobs, err := blob.Open(h.Blobs())
	if err != nil {
		return nil, err
	}
	// Only the leader writes blobs (followers forward every request to it): every temp file is
	// an upload that a crash or a kill cut.
	if n, err := blobs.RemoveTemp(); err != nil || n > 0 {
		log.Info("removed the temp files of interrupted uploads", "count", n, "err", err)
	}
	for _, t := range compute.Builtin(time.Now().UTC()) {
		if err := st.EnsureCompute(ctx, t); err != nil {
			return nil, err
		}
	}
	runKey, err := runTokenKey(ctx, st)
	if err != nil {
		return nil, err
	}
	wsID, err := workspaceID(ctx, st)
	if err != nil {
		return nil, err
	}
	// The secret box: the key file, and the key of a rotation a crash interrupted (finished below).
	key, err := secrets.OpenBox(filepath.Join(h.Dir, "secret.key"))
	if err != nil {
		return nil, err
	}
	token, err := h.EnsureToken()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own binary: %w", err)
	}
	ownURL := func() string { return ws.l.url }
	// Targets with their secrets unsealed, for the backends that connect to them: built before
	// the backends and the controller, so neither waits for the other.
	targets := compute.Resolver{Lookup: st.Compute, Secrets: key}
	// The backends, one per compute type.
	backends := map[string]backend.Backend{
		compute.TypeSSH: &sshbackend.Backend{
			ServerURL: ownURL, ServerCA: ca,
			Exe: exe, Blobs: blobs, Log: o.Log.With("component", "backend/ssh"), Targets: targets.Resolve,
		},
		compute.TypeSlurm: &slurmbackend.Backend{
			Root: filepath.Join(h.Dir, "slurm"), Exe: exe, ServerURL: ownURL, ServerURLFile: h.ServerFile(), ServerCA: ca,
			BlobDir: h.Blobs(), Blobs: blobs, Hide: []string{h.Dir}, Log: o.Log.With("component", "backend/slurm"),
			Targets: targets.Resolve,
		},
		compute.TypeKubernetes: &kubebackend.Backend{
			ServerURL: ownURL, ServerCA: ca, Targets: targets.Resolve, Workspace: wsID, Log: o.Log.With("component", "backend/kubernetes"),
			ClaimKey: runKey, // online deployments' Deployments: their pods' claim tokens
		},
		compute.TypeLocal: &local.Backend{
			Root: h.LocalRoot(), Exe: exe, ServerURL: ownURL, ServerURLFile: h.ServerFile(), ServerCA: ca,
			BlobDir: h.Blobs(), Hide: []string{h.Dir}, Log: o.Log.With("component", "backend/local"),
		},
	}
	ctrl := &controller.Controller{
		Store: st, Blobs: blobs, Backends: backends, Tokens: tokens.Run{Key: runKey},
		Secrets:  key,
		Settings: o.Controller, Log: o.Log.With("component", "controller"),
	}
	machine := sync.OnceValue(func() sizes.Machine { return sizes.MachineOf(node.Detect(context.Background())) })
	catalog := func(ctx context.Context) (*sizes.Catalog, error) { return sizes.Load(ctx, st, machine()) }
	// Managed clusters: one dispatcher for the agents' routes and the cluster backend, so that
	// work the backend queues reaches an agent's waiting heartbeat at once; agents' reports that
	// free room, and requeues, go through the controller.
	agents := &clusterbackend.Dispatcher{Store: st, Key: runKey, RunToken: ctrl.RunToken, Changed: ctrl.Kick,
		Log: o.Log.With("component", "agents")}
	clusters := &clusterbackend.Backend{Store: st, Agents: agents, Sizes: catalog, JoinURL: urlFn, JoinCA: ca,
		Provider: providers(exe, h.LocalRoot(), []string{h.Dir}, o.Log),
		Policy:   autoscaler.Policy{LostAfter: o.Controller.LostAfter}, Requeue: ctrl.Requeue,
		Log: o.Log.With("component", "backend/cluster")}
	backends[compute.TypeCluster] = clusters
	// Compute instances: one-node pools of a second cluster backend over the same agents (design 0018).
	agents.Activity = ctrl.InstanceActivity
	agents.Jupyter = ctrl.InstanceJupyter
	backends[compute.TypeInstance] = &clusterbackend.Backend{Store: st, Agents: agents, Sizes: catalog, JoinURL: urlFn, JoinCA: ca,
		Provider: clusters.Provider, Policy: clusters.Policy, Requeue: ctrl.Requeue,
		Kind: compute.TypeInstance, PoolSpec: ctrl.InstancePoolSpec, Admit: ctrl.AdmitInstance,
		Log: o.Log.With("component", "backend/instance")}
	ctrl.LocalRuntime = node.ContainerRuntime
	ctrl.Init()
	if err := ctrl.FinishKeyRotation(ctx); err != nil {
		return nil, err
	}
	// A request's body is held in memory while it waits and for its mirrors: 16 MiB each (Azure's
	// managed endpoints take 1.5 MB), so a thousand held requests stay within the machine.
	endpoints := server.NewServing(ctrl, router.Config{Log: o.Log.With("component", "router"), MaxBody: endpointMaxBody})
	srv := server.New(server.Config{
		Store: st, Blobs: blobs, Controller: ctrl, Backends: backends, Clusters: clusters, AdminToken: token,
		URL: ownURL, Workspace: h.Dir, Log: log, Serving: endpoints, OIDC: oidcConfig(o.OIDC), Role: ws.role, Servers: ws.servers,
	})
	// The CLI on this machine and the local and Slurm supervisors find the server here: on a
	// replicated workspace's shared directory, the leader.
	if err := h.WriteServerInfo(home.ServerInfo{URL: ownURL(), PID: os.Getpid(), StartedAt: time.Now().UTC(),
		CA: string(ca), Listen: ws.l.ln.Addr().String()}); err != nil {
		return nil, err
	}
	db := h.DB()
	if h.Database != "" {
		db = home.RedactURL(h.Database)
	}
	log.Info("workspace server listening", "url", ownURL(), "nodes", urlFn(), "home", h.Dir, "database", db)
	go ctrl.Run(ctx)
	go ctrl.RunInstances(ctx, instanceOptions(log))
	go endpoints.Run(ctx)
	return srv.Handler(), nil
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
