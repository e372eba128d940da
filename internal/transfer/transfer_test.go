package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/server"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

// workspace is the real server behind httptest, counting the requests it serves.
type workspace struct {
	blobs  *blob.Store
	client *api.Client

	mu       sync.Mutex
	requests map[string]int // "PUT /api/blobs/{hash}", "POST /api/blobs/bundle", ...
}

func newWorkspace(t testing.TB) *workspace {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(t.Context(), filepath.Join(dir, "workspace.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctrl := controller.New(controller.Config{Store: st, Blobs: blobs, Backends: map[string]backend.Backend{}, Log: log})
	srv := server.New(server.Config{Store: st, Blobs: blobs, Controller: ctrl, AdminToken: "tok", Log: log,
		URL: func() string { return "" }})
	w := &workspace{blobs: blobs, requests: map[string]int{}}
	h := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		if r.Method == http.MethodPut {
			key = "PUT /api/blobs/{hash}"
		}
		w.mu.Lock()
		w.requests[key]++
		w.mu.Unlock()
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(hs.Close)
	w.client = api.NewClient(hs.URL, "tok")
	return w
}

// takeRequests returns the requests counted so far and starts counting again.
func (w *workspace) takeRequests() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.requests
	w.requests = map[string]int{}
	return r
}

// checkHolds fails unless the workspace holds each item's content.
func (w *workspace) checkHolds(t testing.TB, items []Item) {
	t.Helper()
	for _, it := range items {
		f, err := w.blobs.Open(it.Hash)
		if err != nil {
			t.Errorf("blob %s not stored: %v", it.Hash, err)
			continue
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := readItem(t, it)
		if !bytes.Equal(got, want) {
			t.Errorf("blob %s holds %d bytes, want %d", it.Hash, len(got), len(want))
		}
	}
}

func readItem(t testing.TB, it Item) []byte {
	t.Helper()
	r, err := it.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// item is a BytesItem of content.
func item(t testing.TB, content []byte) Item {
	t.Helper()
	h, _, err := blob.HashReader(bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	return BytesItem(h, content)
}

// sized returns n bytes that differ per seed.
func sized(n int, seed string) []byte {
	return bytes.Repeat([]byte(seed), n/len(seed)+1)[:n]
}

func TestUploadSendsOnlyMissing(t *testing.T) {
	w := newWorkspace(t)
	ctx := t.Context()
	have := item(t, []byte("already there"))
	if _, err := w.blobs.PutBytes(readItem(t, have)); err != nil {
		t.Fatal(err)
	}
	small1, small2 := item(t, []byte("small one")), item(t, []byte("small two"))
	large := item(t, sized(smallBlob, "L"))
	items := []Item{have, small1, large, small2, small1} // small1 twice
	var mu sync.Mutex                                    // progress may be called from several goroutines (see TestUploadProgressSerialised)
	var progress []int64
	st, err := Upload(ctx, w.client, items, func(n int64) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, n)
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := small1.Size + small2.Size + large.Size
	want := Stats{Blobs: 4, Bytes: have.Size + sent, Sent: 3, SentBytes: sent, Requests: 3}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	wantReqs := map[string]int{"POST /api/blobs/missing": 1, "POST /api/blobs/bundle": 1, "PUT /api/blobs/{hash}": 1}
	if diff := cmp.Diff(wantReqs, w.takeRequests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	w.checkHolds(t, items)
	if len(progress) != 2 || max(progress[0], progress[1]) != sent {
		t.Errorf("progress reports %v, want two, the larger %d", progress, sent)
	}

	// Everything is there now: one question, nothing sent.
	st, err = Upload(ctx, w.client, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent != 0 || st.Requests != 1 {
		t.Errorf("second upload sent %d blobs in %d requests, want 0 in 1", st.Sent, st.Requests)
	}
	if diff := cmp.Diff(map[string]int{"POST /api/blobs/missing": 1}, w.takeRequests()); diff != "" {
		t.Errorf("requests of the second upload (-want +got):\n%s", diff)
	}
}

func TestUploadBatching(t *testing.T) {
	w := newWorkspace(t)
	var items []Item
	// More hashes than one "missing" question holds, more small blobs than one bundle holds.
	for i := range missingBatch + 1 {
		items = append(items, item(t, []byte(fmt.Sprintf("tiny %d", i))))
	}
	// Small blobs just under the limit: more bytes than one bundle holds.
	for i := range 17 {
		items = append(items, item(t, sized(smallBlob-1, fmt.Sprintf("s%02d", i))))
	}
	// Large blobs go one by one.
	for i := range 2 {
		items = append(items, item(t, sized(smallBlob+i, fmt.Sprintf("big%d", i))))
	}
	st, err := Upload(t.Context(), w.client, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := w.takeRequests()
	if reqs["POST /api/blobs/missing"] != 2 || reqs["PUT /api/blobs/{hash}"] != 2 {
		t.Errorf("requests %v: want 2 missing questions and 2 single uploads", reqs)
	}
	// 17 blobs of ~1 MiB need two 16 MiB bundles; 5001 tiny ones need two 4000-item bundles; they may share.
	if n := reqs["POST /api/blobs/bundle"]; n < 3 || n > 4 {
		t.Errorf("%d bundles, want 3 or 4", n)
	}
	total := 0
	for _, n := range reqs {
		total += n
	}
	if st.Sent != len(items) || st.Requests != total {
		t.Errorf("stats: sent %d of %d, %d requests (served %d)", st.Sent, len(items), st.Requests, total)
	}
	w.checkHolds(t, items)
}

func TestUploadProgressSerialised(t *testing.T) {
	w := newWorkspace(t)
	items := []Item{item(t, sized(smallBlob, "a")), item(t, sized(smallBlob, "b"))} // two single uploads, in parallel
	var inside atomic.Int32
	second := make(chan struct{})
	var once sync.Once
	var overlapped atomic.Bool
	_, err := Upload(t.Context(), w.client, items, func(int64) {
		if inside.Add(1) > 1 {
			overlapped.Store(true)
		}
		defer inside.Add(-1)
		first := false
		once.Do(func() { first = true })
		if !first {
			close(second)
			return
		}
		// Give the other upload the time to report while this call is still running.
		select {
		case <-second:
		case <-time.After(5 * time.Second):
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if overlapped.Load() {
		t.Error("progress was called again before its previous call returned")
	}
}

func TestPlan(t *testing.T) {
	// summary describes batches as "<count>x<size of the first>".
	summary := func(batches [][]Item) []string {
		var out []string
		for _, b := range batches {
			out = append(out, fmt.Sprintf("%dx%d", len(b), b[0].Size))
		}
		return out
	}
	mk := func(n int, size int64) []Item {
		items := make([]Item, n)
		for i := range items {
			items[i] = Item{Hash: fmt.Sprint(size, "-", i), Size: size}
		}
		return items
	}
	tests := []struct {
		name  string
		items []Item
		want  []string
	}{
		{"nothing", nil, nil},
		{"large ones alone, largest first", append(append(mk(1, 10), mk(1, smallBlob)...), mk(1, smallBlob+5)...),
			[]string{fmt.Sprintf("1x%d", smallBlob+5), fmt.Sprintf("1x%d", smallBlob), "1x10"}},
		{"bundles stay under bundleMaxBytes", mk(17, smallBlob-1),
			[]string{fmt.Sprintf("16x%d", smallBlob-1), fmt.Sprintf("1x%d", smallBlob-1)}},
		{"bundles stay under bundleMaxItems", mk(bundleMaxItems+1, 1),
			[]string{fmt.Sprintf("%dx1", bundleMaxItems), "1x1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, summary(plan(tt.items))); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUploadOpenError(t *testing.T) {
	w := newWorkspace(t)
	boom := errors.New("file vanished")
	bad := Item{Hash: strings.Repeat("ab", 32), Size: 5, Open: func() (io.ReadCloser, error) { return nil, boom }}
	badLarge := Item{Hash: strings.Repeat("cd", 32), Size: smallBlob, Open: func() (io.ReadCloser, error) { return nil, boom }}
	for _, it := range []Item{bad, badLarge} {
		if _, err := Upload(t.Context(), w.client, []Item{it}, nil); err == nil {
			t.Errorf("upload of an unreadable %d-byte item succeeded", it.Size)
		}
		if w.blobs.Has(it.Hash) {
			t.Errorf("blob %s stored although it could not be read", it.Hash)
		}
	}
}

// writeTree creates files (slash path → content) under a new directory.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scanTree returns a tree's manifest (encoded and its hash) and its file items.
func scanTree(t testing.TB, dir string) (hash string, data []byte, items []Item) {
	t.Helper()
	m, local, _, err := snapshot.Scan(t.Context(), dir, snapshot.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, hash, err = m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Files() {
		items = append(items, FileItem(e.Hash, e.Size, local[e.Hash]))
	}
	return hash, data, items
}

func TestUploadTree(t *testing.T) {
	w := newWorkspace(t)
	ctx := t.Context()
	dir := writeTree(t, map[string]string{"train.py": "print('hi')\n", "lib/util.py": "x = 1\n", "lib/copy.py": "x = 1\n", "README": "r"})
	hash, data, items := scanTree(t, dir)

	st, err := UploadTree(ctx, w.client, hash, data, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := w.takeRequests()
	total := 0
	for _, n := range reqs {
		total += n
	}
	if st.Requests != total || st.Sent != 4 || st.Blobs != 4 { // 3 distinct files and the manifest
		t.Errorf("first upload: %+v (served %v)", st, reqs)
	}
	w.checkHolds(t, append(items, BytesItem(hash, data)))

	// Unchanged: exactly one request, nothing sent.
	st, err = UploadTree(ctx, w.client, hash, data, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"POST /api/blobs/missing": 1}, w.takeRequests()); diff != "" {
		t.Errorf("requests for an unchanged tree (-want +got):\n%s", diff)
	}
	want := Stats{Blobs: 4, Bytes: int64(len(data) + len("print('hi')\n") + len("x = 1\n") + len("r")), Requests: 1}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("unchanged tree stats (-want +got):\n%s", diff)
	}

	// One file changed: that file and the new manifest travel, nothing else.
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte("print('bye')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hash2, data2, items2 := scanTree(t, dir)
	st, err = UploadTree(ctx, w.client, hash2, data2, items2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent != 2 || st.SentBytes != int64(len("print('bye')\n")+len(data2)) {
		t.Errorf("changed tree: sent %d blobs, %d bytes", st.Sent, st.SentBytes)
	}
	w.takeRequests()

	// The manifest is what makes the tree known: it is fetched back intact.
	m, err := FetchManifest(ctx, ClientSource{C: w.client}, hash2)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range m.Files() {
		paths = append(paths, e.Path)
	}
	if diff := cmp.Diff([]string{"README", "lib/copy.py", "lib/util.py", "train.py"}, paths); diff != "" {
		t.Errorf("manifest files (-want +got):\n%s", diff)
	}
}

// mapSource is a snapshot.Source over a map, which may hold content under a wrong hash.
type mapSource map[string][]byte

func (s mapSource) Open(_ context.Context, hash string) (io.ReadCloser, error) {
	b, ok := s[hash]
	if !ok {
		return nil, blob.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func TestFetchManifest(t *testing.T) {
	good := &snapshot.Manifest{Entries: []snapshot.Entry{
		{Path: "a.txt", Type: snapshot.TypeFile, Hash: strings.Repeat("0", 64), Size: 0, Mode: 0o644},
	}}
	data, hash, err := good.Encode()
	if err != nil {
		t.Fatal(err)
	}
	notJSON := []byte("not a manifest")
	notJSONHash, _, _ := blob.HashReader(bytes.NewReader(notJSON))
	other := strings.Repeat("ef", 32)
	src := mapSource{hash: data, other: data, notJSONHash: notJSON}

	got, err := FetchManifest(t.Context(), src, hash)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(good, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	tests := []struct {
		name, hash, want string
	}{
		{"content does not match the hash", other, "content does not match its hash"},
		{"not stored", strings.Repeat("12", 32), "blob not found"},
		{"not a manifest", notJSONHash, "manifest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := FetchManifest(t.Context(), src, tt.hash)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FetchManifest = %v, %v; want an error containing %q", m, err, tt.want)
			}
		})
	}
}
