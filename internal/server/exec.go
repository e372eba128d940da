package server

import (
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

func (s *runRoutes) execCreate(w http.ResponseWriter, r *http.Request) {
	var req api.ExecRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
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
	writeJSON(w, http.StatusCreated, req)
}

func (s *runRoutes) execTake(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("id") + "/" + r.URL.Query().Get("node")
	deadline := time.Now().Add(waitParam(r))
	x := s.exec
	for {
		x.mu.Lock()
		reqs, changed := x.pending[key], x.changed
		delete(x.pending, key)
		x.mu.Unlock()
		if len(reqs) > 0 || !time.Now().Before(deadline) {
			if reqs == nil {
				reqs = []api.ExecRequest{}
			}
			writeJSON(w, http.StatusOK, reqs)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
	}
}

func (s *runRoutes) execGet(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("id") + "/" + r.PathValue("eid")
	deadline := time.Now().Add(waitParam(r))
	x := s.exec
	for {
		x.mu.Lock()
		st, changed := x.status[key], x.changed
		var cp api.ExecStatus
		if st != nil {
			cp = *st
		}
		x.mu.Unlock()
		if st == nil {
			writeError(w, s.log, &httpError{http.StatusNotFound, api.CodeNotFound, "no such exec request"})
			return
		}
		if cp.Done || !time.Now().Before(deadline) {
			writeJSON(w, http.StatusOK, cp)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
	}
}

func (s *runRoutes) execDone(w http.ResponseWriter, r *http.Request) {
	var st api.ExecStatus
	if err := readJSON(r, &st); err != nil {
		writeError(w, s.log, err)
		return
	}
	st.Done = true
	x := s.exec
	x.mu.Lock()
	x.status[r.PathValue("id")+"/"+r.PathValue("eid")] = &st
	x.wake()
	x.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}
