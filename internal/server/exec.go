package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// execRelay carries commands between the nodes of a multi-node run: the MPI launcher on node 0
// asks (through `hangar mpi-rsh`) for its daemons to be started on the other nodes, whose
// supervisors take and run them. Requests live in memory: they matter only while the run starts.
type execRelay struct {
	mu      sync.Mutex
	pending map[string][]api.ExecRequest // run/node → requests not taken yet
	status  map[string]*api.ExecStatus   // run/request id → status
	changed chan struct{}
}

func newExecRelay() *execRelay {
	return &execRelay{pending: map[string][]api.ExecRequest{}, status: map[string]*api.ExecStatus{}, changed: make(chan struct{})}
}

// wake tells waiters something changed (call with mu held).
func (x *execRelay) wake() {
	close(x.changed)
	x.changed = make(chan struct{})
}

func waitParam(r *http.Request) time.Duration {
	s, _ := strconv.ParseFloat(r.URL.Query().Get("wait"), 64)
	return time.Duration(min(s, 60) * float64(time.Second))
}

func (s *runRoutes) execCreate(r *http.Request, req api.ExecRequest) (api.ExecRequest, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	req.ID = hex.EncodeToString(b)
	run := r.PathValue("id")
	x := s.exec
	x.mu.Lock()
	key := run + "/" + strconv.Itoa(req.NodeRank)
	x.pending[key] = append(x.pending[key], req)
	x.status[run+"/"+req.ID] = &api.ExecStatus{}
	x.wake()
	x.mu.Unlock()
	return req, nil
}

// wait long-polls the relay: it calls ready (with mu held) at once and after each change, until
// it says yes or the deadline passes (ready is then told it is the last call). It returns false
// when the request ended first.
func (x *execRelay) wait(ctx context.Context, deadline time.Time, ready func(last bool) bool) bool {
	for {
		x.mu.Lock()
		changed, done := x.changed, ready(!time.Now().Before(deadline))
		x.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
	}
}

func (s *runRoutes) execTake(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("id") + "/" + r.URL.Query().Get("node")
	x := s.exec
	var reqs []api.ExecRequest
	if !x.wait(r.Context(), time.Now().Add(waitParam(r)), func(last bool) bool {
		reqs = x.pending[key]
		delete(x.pending, key)
		return len(reqs) > 0 || last
	}) {
		return
	}
	if reqs == nil {
		reqs = []api.ExecRequest{}
	}
	writeJSON(w, http.StatusOK, reqs)
}

func (s *runRoutes) execGet(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("id") + "/" + r.PathValue("eid")
	x := s.exec
	var st *api.ExecStatus
	var cp api.ExecStatus
	if !x.wait(r.Context(), time.Now().Add(waitParam(r)), func(last bool) bool {
		if st = x.status[key]; st != nil {
			cp = *st
		}
		return st == nil || cp.Done || last
	}) {
		return
	}
	if st == nil {
		writeError(w, s.log, &httpError{http.StatusNotFound, api.CodeNotFound, "no such exec request"})
		return
	}
	writeJSON(w, http.StatusOK, cp)
}

func (s *runRoutes) execDone(r *http.Request, st api.ExecStatus) error {
	st.Done = true
	x := s.exec
	x.mu.Lock()
	x.status[r.PathValue("id")+"/"+r.PathValue("eid")] = &st
	x.wake()
	x.mu.Unlock()
	return nil
}
