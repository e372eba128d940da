package server

import "net/http"

// respond answers v as JSON with status, or err as errors.go maps it: the end of most handlers.
func (s *Server) respond(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, status, v)
}

// withBody decodes a request's JSON body (within its route's limits) into an In and answers
// what fn makes of it with 200.
func withBody[In any](s *Server, w http.ResponseWriter, r *http.Request, fn func(in In) (any, error)) {
	var in In
	if err := readJSON(r, &in); err != nil {
		writeError(w, s.log, err)
		return
	}
	v, err := fn(in)
	s.respond(w, http.StatusOK, v, err)
}

// views maps what the store or the controller answered to its wire views: never nil, so that an
// empty list is [], not null.
func views[T, V any](xs []T, view func(T) V) []V {
	out := make([]V, 0, len(xs))
	for _, x := range xs {
		out = append(out, view(x))
	}
	return out
}
