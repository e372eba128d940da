package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// routes registers computes and sizes: every role reads them, compute operators and owners change them.
func (s *computeRoutes) routes(_, api routes) {
	ok, created := http.StatusOK, http.StatusCreated
	api.handle("GET /api/computes", readAccess, answer(s.Server, ok, s.listComputes))
	api.handle("GET /api/computes/{name}", readAccess, answer(s.Server, ok, s.getCompute))
	api.handle("POST /api/computes", computeAccess.audited("compute.create"), answerBody(s.Server, created, s.createCompute))
	api.handle("PUT /api/computes/{name}", computeAccess.audited("compute.update"), answerBody(s.Server, ok, s.updateCompute))
	api.handle("DELETE /api/computes/{name}", computeAccess.audited("compute.delete"), noContent(s.Server, s.deleteCompute))
	api.handle("GET /api/sizes", readAccess, answer(s.Server, ok, s.listSizes))
	api.handle("POST /api/sizes", computeAccess.audited("size.create"), answerBody(s.Server, created, s.createSize))
	api.handle("DELETE /api/sizes/{name}", computeAccess.audited("size.delete"), noContent(s.Server, s.deleteSize))
}

func (s *computeRoutes) listComputes(r *http.Request) ([]api.Compute, error) {
	ts, err := s.cfg.Store.Cluster.Computes(r.Context())
	if err != nil {
		return nil, err
	}
	out := make([]api.Compute, 0, len(ts))
	for _, t := range ts {
		c := s.describe(r.Context(), t, false)
		redactHookEnv(who(r), c.Spec)
		out = append(out, c)
	}
	if pool, err := s.endpoints.machinePool(r.Context()); err != nil { // serverlesspool.go
		return nil, err
	} else if pool != nil {
		out = append(out, *pool)
	}
	return out, nil
}

func (s *computeRoutes) getCompute(r *http.Request) (*api.Compute, error) {
	t, err := s.cfg.Store.Cluster.Compute(r.Context(), r.PathValue("name"))
	if errors.Is(err, store.ErrNotFound) && r.PathValue("name") == compute.ServerlessName {
		pool, err := s.endpoints.machinePool(r.Context()) // serverlesspool.go
		if err != nil || pool != nil {
			return pool, err
		}
	}
	if err != nil {
		return nil, err
	}
	c := s.describe(r.Context(), *t, r.URL.Query().Get("detail") != "false")
	redactHookEnv(who(r), c.Spec)
	return &c, nil
}

// describe turns a target into its API view; with detail, the backend describes its node.
func (s *computeRoutes) describe(ctx context.Context, t compute.Target, detail bool) api.Compute {
	c := api.Compute{Name: t.Name, Type: t.Type, Description: t.Description, CreatedAt: t.CreatedAt}
	if st, err := compute.Load(t); err == nil {
		c.Spec, c.Node = st.Spec.Redacted(), st.Node
		if !st.AttachedAt.IsZero() {
			at := st.AttachedAt
			c.AttachedAt = &at
		}
	}
	def, ok, _ := s.cfg.Store.Setting(ctx, workspace.SettingDefaultCompute)
	c.Default = (ok && def == t.Name) || (!ok && t.Name == compute.LocalName)
	if runs, err := s.cfg.Store.Runs.List(ctx, store.RunFilter{Active: true, Compute: t.Name}); err == nil {
		c.ActiveRuns = len(runs)
	}
	if ps, ok, _ := s.cfg.Store.Cluster.PoolState(ctx, t.Name); ok {
		c.Properties = map[string]any{"target_nodes": ps.Target, "current_nodes": ps.Current,
			"explain": ps.Explain, "last_error": ps.LastError}
	}
	f := targetFacts{Type: t.Type}
	if b, ok := s.cfg.Backends[t.Type]; ok {
		f.HasBackend = true
		// The controller's calls found it silent: Describe would wait for it too.
		f.Silent = s.cfg.Controller.TargetState(t)
		if d, ok := b.(backend.Describer); ok && detail && f.Silent == "" {
			if n, err := d.Describe(ctx, t); err == nil {
				c.Node = n
			} else {
				f.Unreachable = err.Error()
			}
		}
	} else if t.Type == compute.TypeServerless {
		_, f.HasBackend = s.cfg.Backends[compute.TypeCluster] // its jobs run on managed clusters
	}
	s.endpoints.describePool(&c) // serverlesspool.go
	s.stateFacts(ctx, t, c.Spec, &f)
	c.State = targetState(f) // computestate.go
	return c
}

func (s *computeRoutes) createCompute(r *http.Request, spec compute.Spec) (api.Compute, error) {
	return s.putCompute(r, spec, false)
}

func (s *computeRoutes) updateCompute(r *http.Request, spec compute.Spec) (api.Compute, error) {
	if spec.Name != r.PathValue("name") {
		return api.Compute{}, badRequest("name in the body differs from the path")
	}
	return s.putCompute(r, spec, true)
}

func (s *computeRoutes) putCompute(r *http.Request, spec compute.Spec, update bool) (api.Compute, error) {
	if err := s.checkOwnerFields(r, &spec); err != nil {
		return api.Compute{}, err
	}
	if err := stampInstanceOwner(who(r), &spec); err != nil {
		return api.Compute{}, err
	}
	t, err := s.cfg.Controller.Workspace.Computes.Create(r.Context(), spec, update)
	if err != nil {
		return api.Compute{}, err
	}
	return s.describe(r.Context(), *t, false), nil
}

func (s *computeRoutes) deleteCompute(r *http.Request) error {
	force := r.URL.Query().Get("force") == "true"
	return s.cfg.Controller.Workspace.Computes.Delete(r.Context(), r.PathValue("name"), force)
}
