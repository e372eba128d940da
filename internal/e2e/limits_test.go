package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/server"
	"github.com/hangar-ml/hangar/internal/testdisk"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// Oversized bodies, many at once, to JSON and upload routes, with the admin token, a run's token
// and none: each gets a 413 naming its limit, and the server's memory stays bounded. Before,
// six 61 MB bodies to /api/blobs/missing took the server from 21 MB to 2 GB.
func TestFaultBodyAbuseKeepsServerMemoryBounded(t *testing.T) {
	w := newWS(t)
	run := w.sleepingRun()
	runTok := w.runToken(run)
	admin := w.adminToken()
	pid := w.server.Process.Pid
	base := procStatus(t, pid, "VmRSS")

	const jsonSize = 61_000_000 // the size of the reported abuse, under the old 64 MiB cap
	hashes := func() io.Reader {
		return jsonStream(`{"hashes":[`, `"`+strings.Repeat("ab", 32)+`",`, `""]}`, jsonSize)
	}
	lines := func() io.Reader {
		return jsonStream(`{"lines":[`, `{"seq":1,"text":"a line of the log"},`, `{}]}`, jsonSize)
	}
	jobs := func() io.Reader {
		return jsonStream(`{"spec":{"command":"x","tags":{`, `"k":"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv",`, `"k":""}}}`, jsonSize)
	}
	zeros := func(n int64) func() io.Reader { return func() io.Reader { return io.LimitReader(zeroReader{}, n) } }
	type abuse struct {
		token, method, path string
		body                func() io.Reader
		size                int64 // declared; -1: chunked
		want                string
	}
	var all []abuse
	for _, tok := range []string{admin, runTok} {
		for _, size := range []int64{jsonSize, -1} {
			all = append(all,
				abuse{tok, "POST", "/api/runs/" + run + "/logs", lines, size, "POST /api/runs/{id}/logs takes at most 8 MiB"},
				abuse{tok, "POST", "/api/runs/" + run + "/status", jobs, size, "POST /api/runs/{id}/status takes at most 1 MiB"})
		}
		// A declared size is refused before reading; a chunked body is read up to the limit, so
		// it is those that need the memory budget: without it, these 24 at once peak near
		// 270 MiB, over the bound below.
		for range 12 {
			all = append(all,
				abuse{tok, "POST", "/api/blobs/missing", hashes, jsonSize, "POST /api/blobs/missing takes at most 8 MiB"},
				abuse{tok, "POST", "/api/blobs/missing", hashes, -1, "POST /api/blobs/missing takes at most 8 MiB"})
		}
		all = append(all,
			abuse{tok, "PUT", "/api/blobs/" + strings.Repeat("cd", 32), zeros(65 << 30), 65 << 30,
				"PUT /api/blobs/{hash} takes at most 64 GiB, this one has 65 GiB"},
			abuse{tok, "POST", "/api/blobs/bundle", oversizedBundle, -1, "POST /api/blobs/bundle takes at most 64 MiB"})
	}
	all = append(all, abuse{admin, "POST", "/api/jobs", jobs, -1, "POST /api/jobs takes at most 1 MiB"},
		abuse{"", "POST", "/api/agents/join", jobs, -1, "POST /api/agents/join takes at most 256 KiB"})

	var wg sync.WaitGroup
	for _, a := range all {
		wg.Go(func() {
			st, eb := w.post(a.token, a.method, a.path, a.body(), a.size)
			if st != http.StatusRequestEntityTooLarge || eb.Code != api.CodeTooLarge || !strings.Contains(eb.Error, a.want) {
				t.Errorf("%s %s (%d bytes): got %d %q, want 413 with %q", a.method, a.path, a.size, st, eb.Error, a.want)
			}
		})
	}
	wg.Wait()

	// Bodies being read hold at most the budget; the Go heap grows to twice what is live before
	// it collects; 48 MiB more covers the connections' buffers, goroutines and the runtime.
	peak := procStatus(t, pid, "VmHWM")
	bound := base + 2*server.BodyMemoryBudget + 48<<20
	t.Logf("server RSS: %d MiB before, peak %d MiB over %d oversized requests (bound %d MiB)",
		base>>20, peak>>20, len(all), bound>>20)
	if peak > bound {
		t.Errorf("server peak RSS %d MiB, more than the bound %d MiB", peak>>20, bound>>20)
	}
	w.ok("job", "show", "-n", run) // and it still serves
	reportFault(t, faultRow{Target: "server", Injected: fmt.Sprintf("%d oversized request bodies at once (61 MB JSON, 65 GiB declared uploads; admin, run and no token)", len(all)),
		Final:  "every one refused with 413 naming its limit; the server kept serving",
		Reason: fmt.Sprintf("server RSS %d MiB before, peak %d MiB (bound %d MiB)", base>>20, peak>>20, bound>>20)})
	if n := tmpFiles(t, w); n > 0 {
		t.Errorf("%d temp files left in blobs/tmp", n)
	}
}

// Uploads cut mid-body, and one whose content does not match its name, leave nothing in
// blobs/tmp; the leftovers of uploads that a killed server was receiving are removed when it
// starts again (before, 502 such files stayed there for good).
func TestFaultInterruptedUploadsLeaveNoTempFiles(t *testing.T) {
	w := newWS(t)
	admin := w.adminToken()
	data := make([]byte, 8<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	bundle := bundleOfRandom(t, 2000, 1000)

	for i := 0; i < 3; i++ {
		w.cutUpload(admin, "PUT", "/api/blobs/"+hash, data, len(data)/2)
		w.cutUpload(admin, "POST", "/api/blobs/bundle", bundle, len(bundle)/2)
	}
	testwait.Within(t, 20*time.Second, "blobs/tmp to be empty after cut uploads", func() bool { return tmpFiles(t, w) == 0 })
	st, eb := w.post(admin, "PUT", "/api/blobs/"+strings.Repeat("ab", 32), bytes.NewReader(data), int64(len(data)))
	if st != http.StatusBadRequest || !strings.Contains(eb.Error, "hash mismatch") {
		t.Errorf("upload under a wrong name = %d %q, want 400 hash mismatch", st, eb.Error)
	}
	// The server may still be reading a cut upload's half body (blobs/tmp was empty only between
	// two of them): leftovers must go, so wait for none rather than look once.
	testwait.Within(t, 20*time.Second, "blobs/tmp to be empty after a mismatch", func() bool { return tmpFiles(t, w) == 0 })

	// A bundle half received when the server dies: its verified entries wait in tmp.
	conn := w.startUpload(admin, "POST", "/api/blobs/bundle", bundle, len(bundle)*3/4)
	defer conn.Close()
	testwait.Within(t, 20*time.Second, "the bundle's entries in blobs/tmp", func() bool { return tmpFiles(t, w) > 100 })
	w.killServer()
	left := tmpFiles(t, w)
	w.startServer()
	n := tmpFiles(t, w)
	if n > 0 {
		t.Errorf("%d of the %d temp files a killed server left are still there after its restart", n, left)
	}
	reportFault(t, faultRow{Target: "server", Injected: "uploads cut mid-body, a blob under a wrong hash, the server killed mid-bundle",
		Final:  fmt.Sprintf("cut uploads refused (400), the wrong hash refused; %d temp files left (%d before the restart)", n, left),
		Reason: "hash mismatch"})
}

// A full workspace disk is said as such, with where, by the CLI: the blob store (one large
// blob, a bundle) and the database. Before, each was "Error: internal error".
func TestFaultWorkspaceDiskFull(t *testing.T) {
	dir := t.TempDir()
	testdisk.Mount(t, dir, 3<<20)
	w := newWSAt(t, dir)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"job.yml": "command: ls\ncode: big\n"})
	writeRandom(t, filepath.Join(src, "big", "weights.bin"), 4<<20)
	want := "no space left on device: writing blob to " + filepath.Join(dir, "blobs") + " (the workspace's disk is full)"
	if r := w.runIn(src, "job", "create", "-f", "job.yml"); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("job create with a blob larger than the disk: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}

	// Small files go in a bundle: leave less room than they need.
	fillLeaving(t, filepath.Join(dir, "filler1"), 100<<10)
	files := map[string]string{"job.yml": "command: ls\ncode: small\n"}
	for i := range 40 {
		files[fmt.Sprintf("small/f%02d.txt", i)] = strings.Repeat(strconv.Itoa(i), 10_000)
	}
	writeFiles(t, src, files)
	if r := w.runIn(src, "job", "create", "-f", "job.yml"); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("job create with a bundle larger than the room left: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	if n := tmpFiles(t, w); n > 0 {
		t.Errorf("%d temp files left in blobs/tmp", n)
	}

	fillLeaving(t, filepath.Join(dir, "filler2"), 0)
	writeFiles(t, src, map[string]string{"nocode.yml": "command: echo hi\n"})
	want = "no space left on device: writing the workspace database in " + dir + " (the workspace's disk is full)"
	if r := w.runIn(src, "job", "create", "-f", "nocode.yml"); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("job create on a full database: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	reportFault(t, faultRow{Target: "server", Injected: "the workspace's disk full (blob upload, bundle, database)",
		Final: "job create exits 1, nothing created", Reason: "no space left on device: writing blob to <home>/blobs (the workspace's disk is full)"})
}

// A run whose node disk fills fails saying so, and where: its log (before: Completed, the log
// cut short without a word) or its outputs (before: a chain of wrapped errors ending in a temp
// file's name).
func TestFaultRunDiskFull(t *testing.T) {
	tests := []struct {
		name, mount, command string
		want                 func(home, run string) string
		warning              string
	}{
		{"log", "local/runs",
			`for i in $(seq 40000); do echo "line $i of a log that fills the disk of the node ........"; done; echo done`,
			func(home, run string) string {
				return "no space left on device: " + filepath.Join(home, "local", "runs", run, "user_logs", "std_log.txt")
			}, "lines of output were lost"},
		{"outputs", "local", `head -c 1500000 /dev/urandom > outputs/model.bin`,
			func(home, run string) string {
				return "no space left on device: writing blob to " + filepath.Join(home, "local", "cache", "blobs")
			}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testdisk.Mount(t, filepath.Join(dir, tt.mount), 2<<20)
			w := newWSAt(t, dir)
			src := t.TempDir()
			writeFiles(t, src, map[string]string{"job.yml": "command: " + strconv.Quote(tt.command) + "\n"})
			run := w.create(filepath.Join(src, "job.yml"))
			d := w.waitStatus(run, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
			if want := tt.want(dir, run); d.Status != job.Failed || d.StatusReason != want {
				t.Errorf("run ended %s (%q), want Failed (%q)", d.Status, d.StatusReason, want)
			}
			if tt.warning != "" && !strings.Contains(strings.Join(d.Warnings, "\n"), tt.warning) {
				t.Errorf("warnings %q do not say %q", d.Warnings, tt.warning)
			}
			reportFault(t, faultRow{Target: "local", Injected: "the node's disk full (" + tt.name + ")", Runs: 1, Final: string(d.Status),
				Reason: strings.ReplaceAll(d.StatusReason, dir, "<home>")})
		})
	}
}

// newWSAt starts a workspace server in dir (prepared by the test, e.g. a small disk).
func newWSAt(t testing.TB, dir string) *ws {
	t.Helper()
	w := &ws{t: t, home: dir, serverArgs: []string{"--cancel-grace", "2s", "--heartbeat", "1s"}}
	w.startServer()
	t.Cleanup(w.cleanup)
	return w
}

// sleepingRun starts a run that sleeps and returns its name once its supervisor is up.
func (w *ws) sleepingRun() string {
	w.t.Helper()
	dir := w.t.TempDir()
	writeFiles(w.t, dir, map[string]string{"job.yml": "command: sleep 300\n"})
	run := w.create(filepath.Join(dir, "job.yml"))
	w.waitStatus(run, time.Minute, job.Running)
	return run
}

// runToken is the token a run's supervisor was given.
func (w *ws) runToken(run string) string {
	w.t.Helper()
	var cfg api.SupervisorConfig
	if err := json.Unmarshal([]byte(readFile(w.t, filepath.Join(w.home, "local", "runs", run, "supervisor.json"))), &cfg); err != nil {
		w.t.Fatal(err)
	}
	return cfg.Token
}

func (w *ws) adminToken() string {
	w.t.Helper()
	tok, err := home.Home{Dir: w.home}.ReadToken()
	if err != nil {
		w.t.Fatal(err)
	}
	return tok
}

func (w *ws) url() string {
	w.t.Helper()
	si, err := home.Home{Dir: w.home}.ReadServerInfo()
	if err != nil {
		w.t.Fatal(err)
	}
	return si.URL
}

// post sends a body (size declared; -1: chunked) and returns the answer's status and error body.
// Go's client reads an answer that comes before the body is sent whole, as a 413 does.
func (w *ws) post(token, method, path string, body io.Reader, size int64) (int, api.ErrorBody) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, w.url()+path, body)
	if err != nil {
		w.t.Fatal(err)
	}
	req.ContentLength = size
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Errorf("%s %s: %v", method, path, err)
		return 0, api.ErrorBody{}
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	_ = json.NewDecoder(resp.Body).Decode(&eb)
	return resp.StatusCode, eb
}

// startUpload declares a body of len(data) bytes and sends its first n bytes.
func (w *ws) startUpload(token, method, path string, data []byte, n int) net.Conn {
	w.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(w.url(), "http://"))
	if err != nil {
		w.t.Fatal(err)
	}
	bw := bufio.NewWriter(conn)
	fmt.Fprintf(bw, "%s %s HTTP/1.1\r\nHost: hangar\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n",
		method, path, token, len(data))
	if _, err := bw.Write(data[:n]); err != nil {
		w.t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		w.t.Fatal(err)
	}
	return conn
}

// cutUpload sends the first n bytes of a body and closes the connection.
func (w *ws) cutUpload(token, method, path string, data []byte, n int) {
	w.t.Helper()
	w.startUpload(token, method, path, data, n).Close()
}

func tmpFiles(t testing.TB, w *ws) int {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(w.home, "blobs", "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return len(des)
}

// procStatus reads a size field (VmRSS, VmHWM) of /proc/<pid>/status, in bytes.
func procStatus(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// jsonStream is prefix, then unit repeated, then suffix, then spaces: a valid JSON document of
// size bytes, made as it is read.
func jsonStream(prefix, unit, suffix string, size int) io.Reader {
	n := (size - len(prefix) - len(suffix)) / len(unit)
	pad := size - len(prefix) - len(suffix) - n*len(unit)
	return io.MultiReader(strings.NewReader(prefix), &repeatReader{unit: unit, n: n}, strings.NewReader(suffix),
		strings.NewReader(strings.Repeat(" ", pad)))
}

type repeatReader struct {
	unit string
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) && r.n > 0 {
		c := copy(p[w:], r.unit[r.off:])
		w += c
		r.off += c
		if r.off == len(r.unit) {
			r.off = 0
			r.n--
		}
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// oversizedBundle is a bundle whose one entry claims 100 MiB: the server streams it to disk
// until the bundle limit.
func oversizedBundle() io.Reader {
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr) // WriteHeader writes the header block; the content follows it
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.Repeat("ef", 32), Size: 100 << 20, Mode: 0o444}); err != nil {
		panic(err)
	}
	return io.MultiReader(&hdr, io.LimitReader(zeroReader{}, 100<<20))
}

// bundleOfRandom is a bundle of n blobs of size random bytes.
func bundleOfRandom(t testing.TB, n, size int) []byte {
	t.Helper()
	var items []blob.BundleItem
	for range n {
		b := make([]byte, size)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		items = append(items, blob.BundleItem{Hash: hex.EncodeToString(s[:]), Size: int64(size),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	var buf bytes.Buffer
	if err := blob.WriteBundle(&buf, items); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fillLeaving writes a file at path that leaves about room bytes free on its file system.
func fillLeaving(t testing.TB, path string, room int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := max(int64(st.Bavail)*st.Bsize-room, 0)
	if room == 0 {
		n += 1 << 20 // past the free space: the copy ends at the full disk's error
	}
	if _, err := io.Copy(f, io.LimitReader(zeroReader{}, n)); err != nil && room > 0 {
		t.Fatal(err)
	}
}
