package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
)

// routes registers the blobs: runs' supervisors and those who submit put them, every role and
// runs read them; and the collector (gc.go).
func (s *blobRoutes) routes(_, api routes) {
	api.handle("POST /api/blobs/missing", contributeOrRunAccess, answerBody(s.Server, http.StatusOK, s.missingBlobs))
	api.handle("PUT /api/blobs/{hash}", contributeOrRunAccess, s.putBlob)
	api.handle("POST /api/blobs/bundle", contributeOrRunAccess, s.putBundle)
	api.handle("GET /api/blobs/{hash}", readOrRunAccess, s.getBlob)
	s.gcRoutes(api)
}

func (s *blobRoutes) missingBlobs(_ *http.Request, req api.MissingRequest) (*api.MissingResponse, error) {
	for _, h := range req.Hashes {
		if !blob.ValidHash(h) {
			return nil, badRequest("not a blob hash: " + h)
		}
	}
	missing := s.cfg.Blobs.Missing(req.Hashes)
	if missing == nil {
		missing = []string{}
	}
	return &api.MissingResponse{Missing: missing}, nil
}

func (s *blobRoutes) putBlob(w http.ResponseWriter, r *http.Request) {
	h := r.PathValue("hash")
	if !blob.ValidHash(h) {
		writeError(w, s.log, badRequest("not a blob hash: "+h))
		return
	}
	if _, _, err := s.cfg.Blobs.Put(r.Body, h); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

func (s *blobRoutes) putBundle(w http.ResponseWriter, r *http.Request) {
	n, b, err := s.cfg.Blobs.PutBundle(r.Body)
	if err != nil {
		if _, _, _, ok := bodyError(err); !ok && !blob.IsNoSpace(err) {
			err = badRequest("bundle: " + err.Error()) // the client sent a bad bundle
		}
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, api.BundleResponse{Count: n, Bytes: b})
}

func (s *blobRoutes) getBlob(w http.ResponseWriter, r *http.Request) {
	h := r.PathValue("hash")
	if !blob.ValidHash(h) {
		writeError(w, s.log, badRequest("not a blob hash: "+h))
		return
	}
	f, err := s.cfg.Blobs.Open(h)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	// private: a browser (the studio) fetches blobs with a session cookie; a shared cache must
	// not keep an authenticated answer for others.
	w.Header().Set("Cache-Control", "private, max-age=31536000, immutable")
	http.ServeContent(w, r, "", st.ModTime(), f)
}
