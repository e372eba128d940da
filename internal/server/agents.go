package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/store"
)

// routes adds the admin routes for cluster nodes to the authenticated API mux, and the routes
// agents call to the outer mux, outside the workspace-token authentication: they carry their own
// tokens (a join token, then the agent token), and neither the admin token nor run tokens are
// accepted there.
func (s *clusterRoutes) routes(mux, api routes) {
	api.handle("GET /api/computes/{name}/nodes", readAccess, s.listNodes)
	api.handle("GET /api/computes/{name}/node-events", readAccess, s.listNodeEvents)
	api.handle("GET /api/nodes/{id}", readAccess, s.getNode)
	api.handle("DELETE /api/nodes/{id}", computeAccess.audited("node.delete"), s.deleteNode)
	mux.handle("POST /api/agents/join", publicAccess, s.agentJoin)
	mux.handle("POST /api/agents/{id}/heartbeat", publicAccess, s.agentHeartbeat)
}

// agents is the clusters' dispatcher: the one the cluster backend queues work with, so that a
// heartbeat waiting for work returns as soon as some is queued.
func (s *clusterRoutes) agents() (*cluster.Dispatcher, error) {
	if s.cfg.Clusters == nil || s.cfg.Clusters.Agents == nil {
		return nil, &httpError{http.StatusNotFound, api.CodeNotFound, "clusters are not enabled on this server"}
	}
	return s.cfg.Clusters.Agents, nil
}

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func (s *clusterRoutes) agentJoin(w http.ResponseWriter, r *http.Request) {
	d, err := s.agents()
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	var req api.JoinRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	rep, err := d.Join(r.Context(), bearer(r), req)
	if err != nil {
		writeError(w, s.log, agentError(err))
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// agentHeartbeat answers an agent's heartbeat, holding it while the agent asks (a long poll)
// until work is queued for its node.
func (s *clusterRoutes) agentHeartbeat(w http.ResponseWriter, r *http.Request) {
	d, err := s.agents()
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	id := r.PathValue("id")
	if err := d.Authenticate(bearer(r), id); err != nil {
		writeError(w, s.log, agentError(err))
		return
	}
	var hb api.AgentHeartbeat
	if err := readJSON(r, &hb); err != nil {
		writeError(w, s.log, err)
		return
	}
	confineServiceAddrs(hb.Activity, r.RemoteAddr)
	rep, err := d.Heartbeat(r.Context(), id, hb)
	if err != nil {
		if r.Context().Err() != nil {
			return // the agent gave up waiting (it has something to report): nobody reads an answer
		}
		writeError(w, s.log, agentError(err))
		return
	}
	if s.cfg.Servers != nil {
		rep.Servers = s.cfg.Servers()
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *clusterRoutes) listNodes(w http.ResponseWriter, r *http.Request) {
	pool := r.PathValue("name")
	if _, err := s.cfg.Store.Cluster.Compute(r.Context(), pool); err != nil {
		writeError(w, s.log, err)
		return
	}
	ns, err := s.cfg.Store.Cluster.Nodes(r.Context(), store.NodeFilter{Pool: pool})
	s.respond(w, http.StatusOK, views(ns, func(n *store.Node) api.Node { return cluster.NodeView(n, nil) }), err)
}

func (s *clusterRoutes) getNode(w http.ResponseWriter, r *http.Request) {
	n, err := s.cfg.Store.Cluster.Node(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	pending, err := s.cfg.Store.Cluster.Assignments(r.Context(), n.ID, true)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, cluster.NodeView(n, pending))
}

// deleteNode removes a node by hand: 202, as its machine is deleted in the background.
func (s *clusterRoutes) deleteNode(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Clusters == nil {
		writeError(w, s.log, badRequest("clusters are not enabled on this server"))
		return
	}
	out, err := s.cfg.Clusters.DeleteNode(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, s.log, agentError(err))
		return
	}
	writeJSON(w, http.StatusAccepted, out)
}

func (s *clusterRoutes) listNodeEvents(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, s.log, badRequest("limit: want a number of entries (0 = all)"))
			return
		}
		limit = n
	}
	evs, err := s.cfg.Store.Cluster.NodeEvents(r.Context(), store.NodeEventFilter{Pool: r.PathValue("name"), Limit: limit})
	s.respond(w, http.StatusOK, views(evs, cluster.EventView), err)
}
