package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// testRunner is the behaviour every Runner shares, run against Local and SSH. r starts in a scratch
// home directory of its own: the helpers write .hangar/ there.
func testRunner(t *testing.T, r Runner) {
	t.Run("Run", func(t *testing.T) { testRun(t, r) })
	t.Run("PutRead", func(t *testing.T) { testPutRead(t, r) })
	t.Run("PutBinary", func(t *testing.T) { testPutBinary(t, r) })
	t.Run("Blobs", func(t *testing.T) { testBlobs(t, r) })
	t.Run("Detached", func(t *testing.T) { testDetached(t, r) })
	t.Run("Detect", func(t *testing.T) { testDetect(t, r) })
}

func testRun(t *testing.T, r Runner) {
	ctx := t.Context()
	tests := []struct {
		line, stdin, stdout, stderr string
		code                        int
	}{
		{line: "true"},
		{line: "echo out; echo err >&2; exit 3", stdout: "out\n", stderr: "err\n", code: 3},
		{line: "tr a-z A-Z", stdin: "hello\n", stdout: "HELLO\n"},
		{line: "kill -9 $$", code: 137},
		{line: Join("printf", "%s|", "a b", "it's", "$HOME"), stdout: "a b|it's|$HOME|"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		c := Cmd{Line: tt.line, Stdout: &stdout, Stderr: &stderr}
		if tt.stdin != "" {
			c.Stdin = strings.NewReader(tt.stdin)
		}
		code, err := r.Run(ctx, c)
		if err != nil || code != tt.code || stdout.String() != tt.stdout || stderr.String() != tt.stderr {
			t.Errorf("Run(%q) = %d, %v, stdout %q, stderr %q; want %d, stdout %q, stderr %q",
				tt.line, code, err, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
		}
	}
	_, err := Output(ctx, r, "echo first >&2; echo boom >&2; exit 2")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || ee.Stderr != "first; boom" {
		t.Errorf("Output error = %v, want exit 2 with stderr", err)
	}

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := r.Run(short, Cmd{Line: "sleep 30"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run past its deadline: err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %s to notice its deadline", d)
	}
}

func testPutRead(t *testing.T, r Runner) {
	ctx := t.Context()
	p := "scratch/put/a/b.txt"
	for _, content := range []string{"first\n", "second, longer\n"} {
		if err := r.Put(ctx, p, strings.NewReader(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadFile(ctx, p)
		if err != nil || string(got) != content {
			t.Fatalf("ReadFile = %q, %v; want %q", got, err, content)
		}
	}
	out, err := Output(ctx, r, "ls -a scratch/put/a; stat -c %a "+Quote(p))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(out)), []string{".", "..", "b.txt", "640"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after Put: %q, want %q (no temporary files left, mode 640)", got, want)
	}
	if _, err := r.ReadFile(ctx, "scratch/put/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want fs.ErrNotExist", err)
	}
	if err := PutFile(ctx, r, "scratch/put/copy", writeTemp(t, "local\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.ReadFile(ctx, "scratch/put/copy"); string(got) != "local\n" {
		t.Errorf("PutFile copy = %q", got)
	}
	big := make([]byte, 4<<20+123) // several SFTP packets in flight, and a partial one
	rand.Read(big)
	if err := r.Put(ctx, "scratch/put/big", bytes.NewReader(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadFile(ctx, "scratch/put/big"); err != nil || !bytes.Equal(got, big) {
		t.Errorf("big file round trip: %d bytes, %v; want %d", len(got), err, len(big))
	}
	home, err := Home(ctx, r)
	if err != nil || !filepath.IsAbs(home) {
		t.Errorf("Home = %q, %v", home, err)
	}
}

func testPutBinary(t *testing.T, r Runner) {
	ctx := t.Context()
	local := writeTemp(t, "#!/bin/sh\necho binary v1\n")
	cr := &countingRunner{Runner: r}
	p, uploaded, err := PutBinary(ctx, cr, local, "hangar")
	if err != nil || !uploaded {
		t.Fatalf("PutBinary = %q, %v, %v; want an upload", p, uploaded, err)
	}
	sum := sha256.Sum256([]byte("#!/bin/sh\necho binary v1\n"))
	if want := ".hangar/bin/hangar-" + hex.EncodeToString(sum[:])[:16]; p != want {
		t.Errorf("path = %s, want %s", p, want)
	}
	if out, err := Output(ctx, r, Quote(p)); err != nil || string(out) != "binary v1\n" {
		t.Errorf("running it: %q, %v", out, err)
	}
	sent := cr.bytes.Load()
	if p2, uploaded, err := PutBinary(ctx, cr, local, "hangar"); err != nil || uploaded || p2 != p {
		t.Errorf("second PutBinary = %q, %v, %v; want %q kept", p2, uploaded, err, p)
	}
	if cr.bytes.Load() != sent {
		t.Errorf("second PutBinary sent %d bytes", cr.bytes.Load()-sent)
	}
	// A damaged copy is replaced.
	if _, err := Output(ctx, r, "echo garbage > "+Quote(p)); err != nil {
		t.Fatal(err)
	}
	if _, uploaded, err := PutBinary(ctx, r, local, "hangar"); err != nil || !uploaded {
		t.Errorf("PutBinary over a damaged copy: uploaded %v, %v", uploaded, err)
	}
}

func testBlobs(t *testing.T, r Runner) {
	ctx := t.Context()
	store, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var hashes []string
	var sizes []int64
	for i := range 5 {
		data := bytes.Repeat([]byte{byte('a' + i)}, 50_000+i*1000)
		h, err := store.PutBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		hashes, sizes = append(hashes, h), append(sizes, int64(len(data)))
	}
	dir := "scratch/cache/blobs"
	missing, err := MissingBlobs(ctx, r, dir, append(hashes[:3:3], hashes[0]))
	if err != nil || len(missing) != 3 {
		t.Fatalf("MissingBlobs on no cache = %v, %v; want the 3", missing, err)
	}
	cr := &countingRunner{Runner: r}
	st, err := PutBlobs(ctx, cr, dir, store, hashes[:3])
	want := PutStats{Sent: 3, Bytes: sizes[0] + sizes[1] + sizes[2]}
	if err != nil || st != want {
		t.Fatalf("PutBlobs = %+v, %v; want %+v", st, err, want)
	}
	cr.bytes.Store(0)
	st, err = PutBlobs(ctx, cr, dir, store, hashes)
	want = PutStats{Present: 3, Sent: 2, Bytes: sizes[3] + sizes[4]}
	if err != nil || st != want {
		t.Fatalf("second PutBlobs = %+v, %v; want %+v", st, err, want)
	}
	// What travelled is the list of 5 hashes, then the two missing blobs in a tar (a 512-byte
	// header and padding each, 1024 bytes of trailer), not the five.
	if n := cr.bytes.Load(); n < want.Bytes || n > want.Bytes+5*68+2*1024+1024 {
		t.Errorf("second PutBlobs sent %d bytes, want about %d", n, want.Bytes)
	}
	if missing, err := MissingBlobs(ctx, r, dir, hashes); err != nil || len(missing) != 0 {
		t.Errorf("MissingBlobs after upload = %v, %v", missing, err)
	}
	got, err := r.ReadFile(ctx, dir+"/"+hashes[4][:2]+"/"+hashes[4])
	if err != nil || int64(len(got)) != sizes[4] || got[0] != 'e' {
		t.Errorf("blob on host: %d bytes, %v", len(got), err)
	}
	// A source that lies about content is caught on the host and nothing lands in the cache.
	fake := strings.Repeat("f", 64)
	if _, err := PutBlobs(ctx, r, dir, lyingSource{store, hashes[0]}, []string{fake}); err == nil || !strings.Contains(err.Error(), "hash mismatch") {
		t.Errorf("PutBlobs with wrong content: %v, want hash mismatch", err)
	}
	if missing, _ := MissingBlobs(ctx, r, dir, []string{fake}); len(missing) != 1 {
		t.Error("a blob with the wrong content reached the cache")
	}
	if _, err := MissingBlobs(ctx, r, dir, []string{"../etc/passwd"}); !errors.Is(err, blob.ErrInvalidHash) {
		t.Errorf("invalid hash: %v", err)
	}
	if out, _ := Output(ctx, r, "ls "+Quote(dir+"/tmp")); len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("staging left behind: %q", out)
	}
}

func testDetached(t *testing.T, r Runner) {
	ctx := t.Context()
	p, err := StartDetached(ctx, r, Detached{
		Line: `echo "started $GREETING"; trap 'echo term; exit 0' TERM; while :; do sleep 0.1; done`,
		Dir:  "scratch/run", Log: "logs/out.txt", Env: map[string]string{"GREETING": "hi there"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Signal(context.Background(), r, p, syscall.SIGKILL) })
	if alive, err := Alive(ctx, r, p); err != nil || !alive {
		t.Fatalf("Alive = %v, %v", alive, err)
	}
	if runtime.GOOS == "linux" && p.StartTime == 0 {
		t.Error("no start time on linux")
	}
	if alive, _ := Alive(ctx, r, Proc{PID: p.PID, StartTime: p.StartTime + 1}); alive {
		t.Error("Alive with another start time (a reused pid) = true")
	}
	log := "scratch/run/logs/out.txt"
	data := waitTail(t, r, log, 0, "started hi there\n")
	if err := Signal(ctx, r, p, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitGone(t, r, p)
	all := waitTail(t, r, log, int64(len(data)), "term\n") // a shell may say "Terminated" first
	if err := Signal(ctx, r, p, syscall.SIGTERM); !errors.Is(err, ErrProcessGone) {
		t.Errorf("Signal to a finished process: %v, want ErrProcessGone", err)
	}
	if _, _, err := TailFile(ctx, r, "scratch/run/nope", 0, 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("TailFile of a missing file: %v", err)
	}
	if got, size, err := TailFile(ctx, r, log, 6, 4); err != nil || string(got) != "d hi" || size != int64(len(all)) {
		t.Errorf("TailFile(6, 4) = %q, %d, %v", got, size, err)
	}
}

func testDetect(t *testing.T, r Runner) {
	n, err := Detect(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if n.Bash == "" || n.Cores <= 0 || n.MemoryBytes <= 0 || n.Arch != runtime.GOARCH || n.Kernel == "" || !filepath.IsAbs(n.Home) {
		t.Errorf("Detect = %+v", n)
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil && strings.Contains(string(b), "Debian") && !strings.Contains(n.OS, "Debian") {
		t.Errorf("OS = %q on Debian", n.OS)
	}
	t.Logf("node: %+v", n)
}

// waitTail polls TailFile until what arrived from offset ends with want, and returns the file.
func waitTail(t *testing.T, r Runner, path string, offset int64, want string) []byte {
	t.Helper()
	var got []byte
	var err error
	if !testwait.Until(time.Now().Add(10*time.Second), func() bool {
		got, _, err = TailFile(t.Context(), r, path, offset, 1<<20)
		return err == nil && strings.HasSuffix(string(got), want)
	}) {
		t.Fatalf("TailFile(%s, %d) = %q, %v; want %q", path, offset, got, err, want)
	}
	all, err := r.ReadFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func waitGone(t *testing.T, r Runner, p Proc) {
	t.Helper()
	var err error
	if !testwait.Until(time.Now().Add(10*time.Second), func() bool {
		var alive bool
		alive, err = Alive(t.Context(), r, p)
		return err == nil && !alive
	}) {
		t.Fatalf("process %d still alive (%v)", p.PID, err)
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// countingRunner counts the bytes a Runner is given to send (stdin and Put content).
type countingRunner struct {
	Runner
	bytes atomic.Int64
}

func (c *countingRunner) Run(ctx context.Context, cmd Cmd) (int, error) {
	if cmd.Stdin != nil {
		cmd.Stdin = &countReader{cmd.Stdin, &c.bytes}
	}
	return c.Runner.Run(ctx, cmd)
}

func (c *countingRunner) Put(ctx context.Context, path string, r io.Reader, mode fs.FileMode) error {
	return c.Runner.Put(ctx, path, &countReader{r, &c.bytes}, mode)
}

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// lyingSource serves the content of another blob.
type lyingSource struct {
	store *blob.Store
	real  string
}

func (l lyingSource) Open(string) (*os.File, error) { return l.store.Open(l.real) }

func TestLocal(t *testing.T) {
	testRunner(t, &Local{Dir: t.TempDir()})
}
