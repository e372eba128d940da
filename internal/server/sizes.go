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

func (s *computeRoutes) listSizes(r *http.Request) ([]sizes.Size, error) {
	c, err := sizes.Load(r.Context(), s.cfg.Store.Cluster, thisMachine())
	if err != nil {
		return nil, err
	}
	return c.List(), nil
}

func (s *computeRoutes) createSize(r *http.Request, z sizes.Size) (*sizes.Size, error) {
	z.Source = sizes.SourceWorkspace
	if err := z.Validate(); err != nil {
		return nil, badRequest(err.Error())
	}
	if sizes.Reserved(z.Name) {
		return nil, &httpError{http.StatusConflict, api.CodeConflict,
			"name: " + z.Name + " is a built-in size (local-* names are reserved)"}
	}
	if err := s.cfg.Store.Cluster.CreateSize(r.Context(), z, time.Now().UTC()); err != nil {
		if errors.Is(err, store.ErrExists) {
			err = &httpError{http.StatusConflict, api.CodeConflict, "name: a size named " + z.Name + " exists already"}
		}
		return nil, err
	}
	return &z, nil
}

func (s *computeRoutes) deleteSize(r *http.Request) error {
	return s.cfg.Store.Cluster.DeleteSize(r.Context(), r.PathValue("name"))
}
