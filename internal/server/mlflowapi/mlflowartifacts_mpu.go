package mlflowapi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
)

// Multipart upload, as MLflow's HttpArtifactRepository does it when
// MLFLOW_ENABLE_PROXY_MULTIPART_UPLOAD is set: mpu/create answers one URL per part, the client
// PUTs each part there with the headers the answer gives (here: its own Authorization header,
// so a part is authorized like any upload), then mpu/complete assembles the parts in order into
// one blob. Parts wait as files in the workspace (mlflow-uploads/<upload id>/), not as blobs:
// a part is no file of anyone's, and blobs are never removed.
const (
	// PartRoute is a part's upload, which limitOf streams to disk like a blob.
	PartRoute = "PUT /api/2.0/mlflow-artifacts/mpu/part/{upload}/{part}"
	// MaxParts is S3's limit, which MLflow's chunking (100 MiB parts) stays far below.
	MaxParts = 10000
	// uploadTTL is how long an upload neither completed nor aborted keeps its parts.
	uploadTTL  = 24 * time.Hour
	uploadsDir = "mlflow-uploads"
)

// mpuUpload is an upload in progress (upload.json in its folder).
type mpuUpload struct {
	Run string `json:"run"` // whose token may send its parts ("" a user's only)
	// Model is the logged model whose file it is ("" a run's file).
	Model    string `json:"model,omitempty"`
	Path     string `json:"path"` // the file, relative to the run's (or model's) artifact root
	NumParts int    `json:"num_parts"`
}

type MPURequest struct {
	Path     string `json:"path"` // the client's local file: its base name names the artifact
	NumParts int    `json:"num_parts"`
	UploadID string `json:"upload_id"`
	Parts    []struct {
		PartNumber int    `json:"part_number"`
		ETag       string `json:"etag"`
	} `json:"parts"`
}

type MPUCredential struct {
	URL        string            `json:"url"`
	PartNumber int               `json:"part_number"`
	Headers    map[string]string `json:"headers"`
}

func (s *API) mpuRoutes(mux Mux) {
	mux.Handle("POST /api/2.0/mlflow-artifacts/mpu/create/{path...}", contributeOrRunAccess, s.mpuCreate)
	mux.Handle("POST /api/2.0/mlflow-artifacts/mpu/complete/{path...}", contributeOrRunAccess, s.mpuComplete)
	mux.Handle("POST /api/2.0/mlflow-artifacts/mpu/abort/{path...}", contributeOrRunAccess, s.mpuAbort)
	mux.Handle(PartRoute, contributeOrRunAccess, s.mpuPart)
}

// mpuTarget reads an mpu request: the artifact directory in the URL, the file's base name in
// the body.
func (s *API) mpuTarget(r *http.Request) (*artifactTarget, *MPURequest, error) {
	t, err := s.target(r, r.PathValue("path"))
	if err != nil {
		return nil, nil, err
	}
	if s.cfg.Workspace == "" {
		return nil, nil, &Error{Status: http.StatusNotImplemented, Code: CodeNotImplemented, Message: mpuUnsupported}
	}
	var req MPURequest
	if err := s.cfg.Bodies.ReadJSON(r, &req); err != nil {
		return nil, nil, err
	}
	// The client sends its local path: a Windows one separates with backslashes.
	base := req.Path[strings.LastIndexAny(req.Path, `/\`)+1:]
	rel := base
	if t.rel != "" {
		rel = t.rel + "/" + base
	}
	a, err := parseArtifactPath(t.root() + "/" + rel)
	if err != nil {
		return nil, nil, mlflowInvalid(fmt.Sprintf("path %q: not a file name", req.Path))
	}
	t.rel = a.rel
	return t, &req, t.readOnly()
}

func (s *API) mpuCreate(w http.ResponseWriter, r *http.Request) {
	t, req, err := s.mpuTarget(r)
	if err == nil && (req.NumParts < 1 || req.NumParts > MaxParts) {
		err = mlflowInvalid(fmt.Sprintf("num_parts %d: want 1 to %d", req.NumParts, MaxParts))
	}
	var id string
	if err == nil {
		run, model := t.uploadOwner()
		id, err = s.newUpload(mpuUpload{Run: run, Model: model, Path: t.rel, NumParts: req.NumParts})
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	headers := map[string]string{"Authorization": r.Header.Get("Authorization")}
	out := struct {
		UploadID    string          `json:"upload_id"`
		Credentials []MPUCredential `json:"credentials"`
	}{UploadID: id}
	for n := 1; n <= req.NumParts; n++ {
		out.Credentials = append(out.Credentials, MPUCredential{PartNumber: n, Headers: headers,
			URL: fmt.Sprintf("%s://%s/api/2.0/mlflow-artifacts/mpu/part/%s/%d", scheme, r.Host, id, n)})
	}
	writeJSON(w, http.StatusOK, out)
}

// newUpload makes an upload's folder, after removing those of uploads left for longer than
// uploadTTL.
func (s *API) newUpload(u mpuUpload) (string, error) {
	root := filepath.Join(s.cfg.Workspace, uploadsDir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("multipart upload: %w", err)
	}
	if old, err := os.ReadDir(root); err == nil {
		for _, d := range old {
			if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > uploadTTL {
				_ = os.RemoveAll(filepath.Join(root, d.Name()))
			}
		}
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	data, _ := json.Marshal(u)
	if err := os.Mkdir(filepath.Join(root, id), 0o700); err != nil {
		return "", fmt.Errorf("multipart upload: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, id, "upload.json"), data, 0o600); err != nil {
		return "", fmt.Errorf("multipart upload: %w", err)
	}
	return id, nil
}

// upload reads an upload in progress and checks that the caller may write to its run.
func (s *API) upload(r *http.Request, id string) (*mpuUpload, string, error) {
	notFound := &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no multipart upload " + id}
	if b, err := hex.DecodeString(id); err != nil || len(b) != 16 || s.cfg.Workspace == "" {
		return nil, "", notFound
	}
	dir := filepath.Join(s.cfg.Workspace, uploadsDir, id)
	data, err := os.ReadFile(filepath.Join(dir, "upload.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", notFound
	}
	var u mpuUpload
	if err == nil {
		err = json.Unmarshal(data, &u)
	}
	if err != nil {
		return nil, "", fmt.Errorf("multipart upload %s: %w", id, err)
	}
	if err := s.allowRun(r, u.Run); err != nil {
		return nil, "", err
	}
	return &u, dir, nil
}

func (s *API) mpuPart(w http.ResponseWriter, r *http.Request) {
	u, dir, err := s.upload(r, r.PathValue("upload"))
	if err != nil {
		s.writeError(w, err)
		return
	}
	n, err := strconv.Atoi(r.PathValue("part"))
	if err != nil || n < 1 || n > u.NumParts {
		s.writeError(w, mlflowInvalid(fmt.Sprintf("part %q: want 1 to %d", r.PathValue("part"), u.NumParts)))
		return
	}
	etag, err := writePart(dir, n, r.Body)
	if err != nil {
		s.writeBodyError(w, err)
		return
	}
	w.Header().Set("ETag", etag)
	w.WriteHeader(http.StatusOK)
}

// writePart writes a part to a temp file and renames it into place, so that a part cut short
// never passes for a whole one; its ETag is its SHA-256.
func writePart(dir string, n int, body io.Reader) (string, error) {
	f, err := os.CreateTemp(dir, "part-*")
	if err != nil {
		return "", fmt.Errorf("write part %d: %w", n, err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, strconv.Itoa(n)))
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (s *API) mpuComplete(w http.ResponseWriter, r *http.Request) {
	t, req, err := s.mpuTarget(r)
	var u *mpuUpload
	var dir string
	if err == nil {
		u, dir, err = s.upload(r, req.UploadID)
	}
	if err == nil && !u.of(t) {
		err = mlflowInvalid(fmt.Sprintf("upload %s is of another file than %s of %s", req.UploadID, t.rel, t.owner()))
	}
	var hash string
	var size int64
	if err == nil {
		hash, size, err = s.assemble(dir, req)
	}
	if err == nil {
		err = putArtifact(r.Context(), s, t, hash, size)
	}
	if errors.Is(err, store.ErrPathTaken) {
		err = mlflowInvalid(strings.TrimSuffix(err.Error(), ": "+store.ErrPathTaken.Error()))
	}
	if err != nil {
		s.writeBodyError(w, err)
		return
	}
	_ = os.RemoveAll(dir)
	writeJSON(w, http.StatusOK, struct{}{})
}

// assemble puts the listed parts, in part-number order, into one blob, checking each against
// its ETag.
func (s *API) assemble(dir string, req *MPURequest) (string, int64, error) {
	if len(req.Parts) == 0 {
		return "", 0, mlflowInvalid("parts: none listed")
	}
	files := make([]*os.File, 0, len(req.Parts))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var total int64
	readers := make([]io.Reader, 0, len(req.Parts))
	hashes := make([]*etagCheck, 0, len(req.Parts))
	for i, p := range req.Parts {
		if p.PartNumber != i+1 {
			return "", 0, mlflowInvalid(fmt.Sprintf("parts[%d]: part_number %d, want %d (parts in order, none missing)", i, p.PartNumber, i+1))
		}
		f, err := os.Open(filepath.Join(dir, strconv.Itoa(p.PartNumber)))
		if errors.Is(err, fs.ErrNotExist) {
			return "", 0, mlflowInvalid(fmt.Sprintf("parts[%d]: part %d was not uploaded", i, p.PartNumber))
		}
		if err != nil {
			return "", 0, err
		}
		files = append(files, f)
		if fi, err := f.Stat(); err == nil {
			total += fi.Size()
		}
		c := &etagCheck{want: p.ETag, h: sha256.New()}
		hashes = append(hashes, c)
		readers = append(readers, io.TeeReader(f, c.h))
	}
	if total > s.cfg.Bodies.MaxBlob() {
		return "", 0, s.cfg.Bodies.TooLarge("multipart upload", s.cfg.Bodies.MaxBlob(), total)
	}
	hash, size, err := s.cfg.Blobs.Put(io.MultiReader(readers...), "")
	if err != nil {
		return "", 0, err
	}
	for i, c := range hashes {
		if got := hex.EncodeToString(c.h.Sum(nil)); got != strings.Trim(c.want, `"`) {
			return "", 0, mlflowInvalid(fmt.Sprintf("parts[%d]: etag %q, the part uploaded has %q", i, c.want, got))
		}
	}
	return hash, size, nil
}

type etagCheck struct {
	want string
	h    interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func (s *API) mpuAbort(w http.ResponseWriter, r *http.Request) {
	_, req, err := s.mpuTarget(r)
	var dir string
	if err == nil {
		_, dir, err = s.upload(r, req.UploadID)
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	_ = os.RemoveAll(dir)
	writeJSON(w, http.StatusOK, struct{}{})
}
