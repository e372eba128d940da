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

// The handler adapters: most routes decode a request (its path, its query, maybe a JSON body),
// call the controller or the store, and answer what it returns as JSON with one status, or its
// error as errors.go maps it. A route's handler is then only that call:
//
//	api.handle("GET /api/things/{name}", readAccess, answer(s.Server, http.StatusOK, s.getThing))

// answer is a handler that answers what fn makes of a request with status.
func answer[Out any](s *Server, status int, fn func(r *http.Request) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := fn(r)
		s.respond(w, status, v, err)
	}
}

// answerBody is answer for a request with a JSON body, decoded into an In (decoded).
func answerBody[In, Out any](s *Server, status int, fn func(r *http.Request, in In) (Out, error)) http.HandlerFunc {
	return decoded(s, func(w http.ResponseWriter, r *http.Request, in In) {
		v, err := fn(r, in)
		s.respond(w, status, v, err)
	})
}

// noContent is a handler that answers 204 once fn has done what a request asks.
func noContent(s *Server, fn func(r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(r); err != nil {
			writeError(w, s.log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// noContentBody is noContent for a request with a JSON body, decoded into an In (decoded).
func noContentBody[In any](s *Server, fn func(r *http.Request, in In) error) http.HandlerFunc {
	return decoded(s, func(w http.ResponseWriter, r *http.Request, in In) {
		noContent(s, func(r *http.Request) error { return fn(r, in) })(w, r)
	})
}

// decoded is a handler that decodes a request's JSON body (within its route's limits) into an
// In and hands it to h, or answers why it could not. In is a value type: a malformed body's
// error names it.
func decoded[In any](s *Server, h func(w http.ResponseWriter, r *http.Request, in In)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		if err := readJSON(r, &in); err != nil {
			writeError(w, s.log, err)
			return
		}
		h(w, r, in)
	}
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

// viewed maps one record the store or the controller answered to its wire view, or passes on
// the error that came instead.
func viewed[T, V any](x *T, err error, view func(T) V) (V, error) {
	if err != nil {
		var zero V
		return zero, err
	}
	return view(*x), nil
}
