package server

import (
	"net/http"
)

// routes adds compute instances' routes (design 0018): their life, and start, stop and
// restart (no body; ?force=true lets a stop cancel the instance's jobs). Compute operators and owners.
func (s *instanceRoutes) routes(mux, api routes) {
	api.handle("GET /api/computes/{name}/instance", readAccess, s.getInstance)
	for _, action := range []string{"start", "stop", "restart"} {
		api.handle("POST /api/computes/{name}/"+action, computeAccess.audited("compute."+action), s.instanceAction(action))
	}
	// The proxy to instances' Jupyter servers (jupyter.go) and the tunnel to their SSH servers
	// (ssh.go), on the outer mux: both check their own credentials (the instance's owner and
	// workspace owners).
	mux.handle("/instances/{name}/jupyter/", publicAccess, s.jupyterProxy)
	mux.handle("GET /instances/{name}/ssh", publicAccess, s.sshTunnel)
}

func (s *instanceRoutes) getInstance(w http.ResponseWriter, r *http.Request) {
	in, err := s.cfg.Instances.Instance(r.Context(), r.PathValue("name"))
	s.respond(w, http.StatusOK, in, err)
}

func (s *instanceRoutes) instanceAction(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		force := r.URL.Query().Get("force") == "true"
		in, err := s.cfg.Instances.Action(r.Context(), r.PathValue("name"), action, force)
		s.respond(w, http.StatusOK, in, err)
	}
}
