package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
)

// routes adds compute instances' routes (design 0018): their life, and start, stop and
// restart (no body; ?force=true lets a stop cancel the instance's jobs). Compute operators and owners.
func (s *instanceRoutes) routes(mux, api routes) {
	api.handle("GET /api/computes/{name}/instance", readAccess, answer(s.Server, http.StatusOK, s.getInstance))
	for _, action := range []string{"start", "stop", "restart"} {
		api.handle("POST /api/computes/{name}/"+action, computeAccess.audited("compute."+action), answer(s.Server, http.StatusOK, s.instanceAction(action)))
	}
	// The proxy to instances' Jupyter servers (jupyter.go) and the tunnel to their SSH servers
	// (ssh.go), on the outer mux: both check their own credentials (the instance's owner and
	// workspace owners).
	mux.handle("/instances/{name}/jupyter/", publicAccess, s.jupyterProxy)
	mux.handle("GET /instances/{name}/ssh", publicAccess, s.sshTunnel)
}

func (s *instanceRoutes) getInstance(r *http.Request) (*api.Instance, error) {
	return s.cfg.Instances.Instance(r.Context(), r.PathValue("name"))
}

func (s *instanceRoutes) instanceAction(action string) func(r *http.Request) (*api.Instance, error) {
	return func(r *http.Request) (*api.Instance, error) {
		force := r.URL.Query().Get("force") == "true"
		return s.cfg.Instances.Action(r.Context(), r.PathValue("name"), action, force)
	}
}
