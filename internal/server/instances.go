package server

import (
	"net/http"
)

// instanceRoutes adds compute instances' routes (design 0018): their life, and start, stop and
// restart (no body; ?force=true lets a stop cancel the instance's jobs). Workspace token only.
func (s *Server) instanceRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/computes/{name}/instance", adminOnly(s.getInstance))
	for _, action := range []string{"start", "stop", "restart"} {
		mux.HandleFunc("POST /api/computes/{name}/"+action, adminOnly(s.instanceAction(action)))
	}
}

func (s *Server) getInstance(w http.ResponseWriter, r *http.Request) {
	in, err := s.cfg.Controller.Instance(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, in)
}

func (s *Server) instanceAction(action string) http.HandlerFunc {
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
