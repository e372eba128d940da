package main

import (
	"context"
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
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/controller/endpoints"
	"github.com/hangar-ml/hangar/internal/controller/instances"
	"github.com/hangar-ml/hangar/internal/controller/parents"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/secrets"
	"github.com/hangar-ml/hangar/internal/server"
	"github.com/hangar-ml/hangar/internal/serving/router"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/tokens"
	"github.com/hangar-ml/hangar/internal/webhook"
)

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
		if err := st.Cluster.EnsureCompute(ctx, t); err != nil {
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
	targets := compute.Resolver{Lookup: st.Cluster.Compute, Secrets: key}
	// The backends, one per compute type.
	backends := map[string]backend.Backend{
		compute.TypeSSH: &sshbackend.Backend{
			ServerURL: ownURL, ServerCA: ca,
			Exe: exe, Blobs: blobs, Log: o.Log.With("component", "backend/ssh"), Targets: targets.Resolve,
			ObjectCacheBytes: int64(o.ObjectCache),
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
			ObjectCacheBytes: int64(o.ObjectCache),
		},
	}
	// The job types, each made into its run by its creator (beside the backends by compute type).
	creators := map[string]controller.Creator{
		"command":  controller.CommandJob,
		"parallel": controller.ParallelJob,
		"sweep":    controller.SweepJob,
		"pipeline": controller.PipelineJob,
	}
	ctrl := controller.New(controller.Config{
		Store: st, Blobs: blobs, Backends: backends, Creators: creators, Tokens: tokens.Run{Key: runKey},
		Secrets: key, Settings: o.Controller, Log: o.Log.With("component", "controller"),
		LocalRuntime: node.ContainerRuntime,
	})
	machine := sync.OnceValue(func() sizes.Machine { return sizes.MachineOf(node.Detect(context.Background())) })
	catalog := func(ctx context.Context) (*sizes.Catalog, error) { return sizes.Load(ctx, st.Cluster, machine()) }
	// Compute instances' owner: the agents' dispatcher asks it which services an instance's node
	// runs, and the instance backend below takes its instances as one-node pools.
	insts := instances.New(instances.Store{Instances: st.Instances, Cluster: st.Cluster, Runs: st.Runs}, ctrl, key, nil, o.Log.With("component", "instances"))
	// Managed clusters: one dispatcher for the agents' routes and the cluster backend, so that
	// work the backend queues reaches an agent's waiting heartbeat at once; agents' reports that
	// free room, and requeues, go through the controller. Their backends join the map after the
	// controller is made, as they report to it.
	agents := &clusterbackend.Dispatcher{Store: st, Key: runKey, Runs: ctrl, Instances: insts,
		Log: o.Log.With("component", "agents")}
	clusters := &clusterbackend.Backend{Store: st, Agents: agents, Sizes: catalog, JoinURL: urlFn, JoinCA: ca,
		Provider: providers(exe, h.LocalRoot(), []string{h.Dir}, o.Log),
		Policy:   autoscaler.Policy{LostAfter: o.Controller.LostAfter}, Requeuer: ctrl,
		Log: o.Log.With("component", "backend/cluster")}
	backends[compute.TypeCluster] = clusters
	// Compute instances: one-node pools of a second cluster backend over the same agents (design 0018).
	backends[compute.TypeInstance] = &clusterbackend.Backend{Store: st, Agents: agents, Sizes: catalog, JoinURL: urlFn, JoinCA: ca,
		Provider: clusters.Provider, Policy: clusters.Policy, Requeuer: ctrl,
		Kind: compute.TypeInstance, Pools: insts,
		Log: o.Log.With("component", "backend/instance")}
	ws.stopping = func(ctx context.Context) { stopIdleAgents(ctx, clusters, log) }
	if err := ctrl.Workspace.Secrets.FinishKeyRotation(ctx); err != nil {
		return nil, err
	}
	// The parent loop: sweeps and pipelines, their children created through the controller.
	parentLoop := parents.New(parents.Config{Runs: ctrl, Resolver: ctrl.Parents, Store: st.Parents, Reader: st.Runs,
		Log: o.Log.With("component", "parents")})
	// A request's body is held in memory while it waits and for its mirrors: 16 MiB each (Azure's
	// managed endpoints take 1.5 MB), so a thousand held requests stay within the machine.
	serve := endpoints.New(endpoints.Deps{Store: endpoints.Store{Serving: st.Serving, Runs: st.Runs, Cluster: st.Cluster}, Runs: ctrl, Resolver: ctrl.Workspace, Secrets: key, Key: runKey,
		Log: o.Log.With("component", "serving")}, router.Config{Log: o.Log.With("component", "router"), MaxBody: endpointMaxBody})
	srv := server.New(server.Config{
		Store: st, Blobs: blobs, Controller: ctrl, Backends: backends, Clusters: clusters, AdminToken: token,
		URL: ownURL, Workspace: h.Dir, Log: log, Serving: serve, Instances: insts, OIDC: oidcConfig(o.OIDC), Role: ws.role, Servers: ws.servers,
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
	go parentLoop.Run(ctx)
	go insts.Run(ctx, instanceOptions(log))
	go ctrl.RunHousekeeping(ctx) // ended runs' directories, unreferenced blobs
	go serve.Run(ctx)
	// MLflow's registry webhooks: the deliveries the registry's writes left in the store.
	go webhook.NewLoop(webhook.LoopConfig{Store: st.Webhooks, Sealer: key, Sender: webhook.NewSender(0),
		Log: o.Log.With("component", "webhooks")}).Run(ctx)
	return srv.Handler(), nil
}

// stopIdleAgents is a planned stop's: the managed clusters' idle agents that the local provider
// started on this machine stop with the server (a crash leaves them, and a restarted server
// takes them back); those with runs go on, and are logged.
func stopIdleAgents(ctx context.Context, clusters *clusterbackend.Backend, log *slog.Logger) {
	left, err := clusters.StopIdleLocalNodes(ctx)
	if err != nil {
		log.Warn("stopping this machine's idle agents", "err", err)
	}
	if len(left) > 0 {
		log.Info("left running: nodes with runs, which go on and report when a server is back", "nodes", left)
	}
}
