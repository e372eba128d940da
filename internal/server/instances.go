package server

import (
	"net/http"
)

// instanceRoutes adds compute instances' routes (design 0018): their life, and start, stop and
// restart (no body; ?force=true lets a stop cancel the instance's jobs). Compute operators and owners.
func (s *instanceRoutes) instanceRoutes(mux routes) {
	mux.handle("GET /api/computes/{name}/instance", readAccess, s.instances.getInstance)
	for _, action := range []string{"start", "stop", "restart"} {
		mux.handle("POST /api/computes/{name}/"+action, computeAccess.audited("compute."+action), s.instances.instanceAction(action))
	}
}

// jupyterRoutes adds the proxy to instances' Jupyter servers (jupyter.go) and the tunnel to
// their SSH servers (ssh.go) to the outer mux: both check their own credentials (the instance's
// owner and workspace owners).
func (s *instanceRoutes) jupyterRoutes(mux routes) {
	mux.handle("/instances/{name}/jupyter/", publicAccess, s.instances.jupyterProxy)
	mux.handle("GET /instances/{name}/ssh", publicAccess, s.runs.sshTunnel)
}

func (s *instanceRoutes) getInstance(w http.ResponseWriter, r *http.Request) {
	in, err := s.cfg.Controller.Instance(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, in)
}

func (s *instanceRoutes) instanceAction(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		force := r.URL.Query().Get("force") == "true"
		in, err := s.cfg.Controller.InstanceAction(r.Context(), r.PathValue("name"), action, force)
		if err != nil {
			writeError(w, s.log, err)
			return
		}
		writeJSON(w, http.StatusOK, in)
	}
}
