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
	ok := http.StatusOK
	api.handle("GET /api/computes/{name}/nodes", readAccess, answer(s.Server, ok, s.listNodes))
	api.handle("GET /api/computes/{name}/node-events", readAccess, answer(s.Server, ok, s.listNodeEvents))
	api.handle("GET /api/nodes/{id}", readAccess, answer(s.Server, ok, s.getNode))
	api.handle("DELETE /api/nodes/{id}", computeAccess.audited("node.delete"), answer(s.Server, http.StatusAccepted, s.deleteNode))
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
	answerBody(s.Server, http.StatusOK, func(r *http.Request, req api.JoinRequest) (*api.JoinReply, error) {
		rep, err := d.Join(r.Context(), bearer(r), req)
		return rep, agentError(err)
	})(w, r)
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

func (s *clusterRoutes) listNodes(r *http.Request) ([]api.Node, error) {
	pool := r.PathValue("name")
	if _, err := s.cfg.Store.Cluster.Compute(r.Context(), pool); err != nil {
		return nil, err
	}
	ns, err := s.cfg.Store.Cluster.Nodes(r.Context(), store.NodeFilter{Pool: pool})
	return views(ns, func(n *store.Node) api.Node { return cluster.NodeView(n, nil) }), err
}

func (s *clusterRoutes) getNode(r *http.Request) (api.Node, error) {
	n, err := s.cfg.Store.Cluster.Node(r.Context(), r.PathValue("id"))
	if err != nil {
		return api.Node{}, err
	}
	pending, err := s.cfg.Store.Cluster.Assignments(r.Context(), n.ID, true)
	return cluster.NodeView(n, pending), err
}

// deleteNode removes a node by hand: 202, as its machine is deleted in the background.
func (s *clusterRoutes) deleteNode(r *http.Request) (*api.NodeDeletion, error) {
	if s.cfg.Clusters == nil {
		return nil, badRequest("clusters are not enabled on this server")
	}
	out, err := s.cfg.Clusters.DeleteNode(r.Context(), r.PathValue("id"))
	return out, agentError(err)
}

func (s *clusterRoutes) listNodeEvents(r *http.Request) ([]api.NodeEvent, error) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, badRequest("limit: want a number of entries (0 = all)")
		}
		limit = n
	}
	evs, err := s.cfg.Store.Cluster.NodeEvents(r.Context(), store.NodeEventFilter{Pool: r.PathValue("name"), Limit: limit})
	return views(evs, cluster.EventView), err
}
