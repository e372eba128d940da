package server

import (
	"context"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/store"
)

func (s *Server) listComputes(w http.ResponseWriter, r *http.Request) {
	ts, err := s.cfg.Store.Computes(r.Context())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	out := make([]api.Compute, 0, len(ts))
	for _, t := range ts {
		out = append(out, s.describe(r.Context(), t, false))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getCompute(w http.ResponseWriter, r *http.Request) {
	t, err := s.cfg.Store.Compute(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s.describe(r.Context(), *t, true))
}

// describe turns a target into its API view; with detail, the backend describes its node.
func (s *Server) describe(ctx context.Context, t compute.Target, detail bool) api.Compute {
	c := api.Compute{Name: t.Name, Type: t.Type, Description: t.Description, CreatedAt: t.CreatedAt, State: "ready"}
	def, ok, _ := s.cfg.Store.Setting(ctx, controller.SettingDefaultCompute)
	c.Default = (ok && def == t.Name) || (!ok && t.Name == compute.LocalName)
	if runs, err := s.cfg.Store.Runs(ctx, store.RunFilter{Active: true, Compute: t.Name}); err == nil {
		c.ActiveRuns = len(runs)
	}
	if b, ok := s.cfg.Backends[t.Type]; !ok {
		c.State = "unsupported"
	} else if d, ok := b.(backend.Describer); ok && detail {
		if n, err := d.Describe(ctx, t); err == nil {
			c.Node = n
		} else {
			c.State = "unreachable: " + err.Error()
		}
	}
	return c
}
