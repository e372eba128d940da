package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// thisMachine is what the local-* sizes are slices of, detected once.
var thisMachine = sync.OnceValue(func() sizes.Machine {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return sizes.MachineOf(node.Detect(ctx))
})

func (s *computeRoutes) listSizes(w http.ResponseWriter, r *http.Request) {
	c, err := sizes.Load(r.Context(), s.cfg.Store.Cluster, thisMachine())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, c.List())
}

func (s *computeRoutes) createSize(w http.ResponseWriter, r *http.Request) {
	var z sizes.Size
	if err := readJSON(r, &z); err != nil {
		writeError(w, s.log, err)
		return
	}
	z.Source = sizes.SourceWorkspace
	if err := z.Validate(); err != nil {
		writeError(w, s.log, badRequest(err.Error()))
		return
	}
	if sizes.Reserved(z.Name) {
		writeError(w, s.log, &httpError{http.StatusConflict, api.CodeConflict,
			"name: " + z.Name + " is a built-in size (local-* names are reserved)"})
		return
	}
	if err := s.cfg.Store.Cluster.CreateSize(r.Context(), z, time.Now().UTC()); err != nil {
		if errors.Is(err, store.ErrExists) {
			err = &httpError{http.StatusConflict, api.CodeConflict, "name: a size named " + z.Name + " exists already"}
		}
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, z)
}

func (s *computeRoutes) deleteSize(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Store.Cluster.DeleteSize(r.Context(), r.PathValue("name")); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
