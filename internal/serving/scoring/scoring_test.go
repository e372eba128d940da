package scoring

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests run the embedded server with Debian's python3 (the interpreter the project's
// setup scripts provide, with numpy) as a replica would: the script written to a file, the
// code folder, the entry script and the model folder in the environment.

// python returns the interpreter to use: it fails in CI and skips elsewhere without one.
func python(t *testing.T, modules ...string) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			missing(t, "python3 not found")
		}
	}
	for _, m := range modules {
		if err := exec.Command(py, "-c", "import "+m).Run(); err != nil {
			missing(t, py+" lacks "+m+" (scripts/setup/python.sh installs it)")
		}
	}
	return py
}

func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// replica is a running scoring server.
type replica struct {
	url    string
	cmd    *exec.Cmd
	out    *lines    // stdout
	stdout io.Closer // the reading end of its stdout, as its supervisor holds it
	errb   *lockedBuffer
	done   chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines collects a process's stdout and lets a test wait for a line.
type lines struct {
	mu   sync.Mutex
	all  []string
	cond chan struct{} // closed and replaced on each new line
}

func newLines(r io.Reader) *lines {
	l := &lines{cond: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.mu.Lock()
			l.all = append(l.all, sc.Text())
			close(l.cond)
			l.cond = make(chan struct{})
			l.mu.Unlock()
		}
		l.mu.Lock()
		close(l.cond)
		l.cond = nil
		l.mu.Unlock()
	}()
	return l
}

// wait returns the first line with prefix, waiting at most 30 s; "" when none came (the
// process ended or the deadline passed).
func (l *lines) wait(prefix string, count int) string {
	deadline := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		n := 0
		for _, s := range l.all {
			// Two threads' prints may share a line ("startedstarted"): count each one.
			for rest := s; strings.HasPrefix(rest, prefix); rest = rest[len(prefix):] {
				if n++; n == count {
					l.mu.Unlock()
					return s
				}
			}
		}
		c := l.cond
		l.mu.Unlock()
		if c == nil {
			return ""
		}
		select {
		case <-c:
		case <-deadline:
			return ""
		}
	}
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// testSecret is the replica secret the tests' servers are started with.
const testSecret = "hrs1.test-secret"

// launch starts the scoring server for code/entry with the model folder and extra
// variables, without waiting for it.
func launch(t *testing.T, py, code, entry, model string, env ...string) *replica {
	t.Helper()
	dir := t.TempDir()
	server := filepath.Join(dir, FileName)
	if err := os.WriteFile(server, Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, server)
	cmd.Dir = code
	cmd.Env = append(os.Environ(), "PORT=0", "AML_APP_ROOT="+code, "AZUREML_ENTRY_SCRIPT="+entry,
		"AZUREML_MODEL_DIR="+model, "PYTHONDONTWRITEBYTECODE=1", SecretEnv+"="+testSecret, HostEnv+"=127.0.0.1")
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd, stdout: stdout, errb: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = r.errb
	r.out = newLines(stdout)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.done
	})
	return r
}

// start launches the server and waits until it listens.
func start(t *testing.T, py, code, entry, model string, env ...string) *replica {
	t.Helper()
	r := launch(t, py, code, entry, model, env...)
	line := r.out.wait("Listening on 127.0.0.1:", 1)
	if line == "" {
		t.Fatalf("the scoring server did not start\nstdout:\n%s\nstderr:\n%s", r.out, r.errb)
	}
	r.url = "http://127.0.0.1:" + strings.TrimPrefix(line, "Listening on 127.0.0.1:")
	return r
}

// exitCode waits for the process to end by itself and returns its exit status.
func (r *replica) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatalf("the scoring server did not exit\nstdout:\n%s\nstderr:\n%s", r.out, r.errb)
		return -1
	}
}

type response struct {
	status int
	body   string
	header http.Header
	closed bool // the server closes the connection after it (Connection: close)
}

func do(t *testing.T, method, url, body string, header ...string) response {
	t.Helper()
	r, err := send(t, method, url, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send is do for other goroutines than the test's: it returns the error. Requests carry the
// replica's secret, as the router sends them, unless header sets SecretHeader ("": none).
func send(t *testing.T, method, url, body string, header ...string) (response, error) {
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		return response{}, err
	}
	req.Header.Set(SecretHeader, testSecret)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{resp.StatusCode, string(b), resp.Header, resp.Close}, err
}

// sendBody is send for a goroutine: an error is reported and reads as an empty body.
func sendBody(t *testing.T, url, body string) string {
	r, err := send(t, "POST", url, body)
	if err != nil {
		t.Error(err)
	}
	return r.body
}

// writeCode writes a scoring script as score.py in a fresh code folder.
func writeCode(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "score.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Azure's example scoring script (cli/endpoints/online/model-1), unchanged, scores its
// sample request; the liveness route answers; each request is logged on stdout.
func TestAzureExampleScript(t *testing.T) {
	py := python(t, "numpy")
	root, err := filepath.Abs(filepath.Join("testdata", "model-1"))
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, py, filepath.Join(root, "onlinescoring"), "score.py", root)

	if got := do(t, "GET", r.url+"/", ""); got.status != 200 || got.body != "Healthy" {
		t.Errorf("GET / = %d %q, want 200 Healthy", got.status, got.body)
	}
	sample, err := os.ReadFile(filepath.Join(root, "sample-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := do(t, "POST", r.url+"/score", string(sample), "Content-Type", "application/json", "x-request-id", "req-1")
	if got.status != 200 || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("POST /score = %d %s %q", got.status, got.header.Get("Content-Type"), got.body)
	}
	var preds []float64
	if err := json.Unmarshal([]byte(got.body), &preds); err != nil {
		t.Fatalf("body %q: %v", got.body, err)
	}
	if want := []float64{21.5, 12.5}; len(preds) != 2 || preds[0] != want[0] || preds[1] != want[1] {
		t.Errorf("predictions = %v, want %v", preds, want)
	}
	if id := got.header.Get("x-request-id"); id != "req-1" {
		t.Errorf("x-request-id = %q, want the request's", id)
	}
	if line := r.out.wait("POST /score 200 ", 1); line == "" {
		t.Errorf("no request line on stdout:\n%s", r.out)
	}
}

// A module beside the scoring script wins over an installed package of the same name, as on
// Azure (whose server runs under gunicorn, which puts its working directory, the code folder,
// first on sys.path): here numpy, which the test makes sure is installed, so that the result
// does not depend on what the machine lacks.
func TestCodeFolderComesBeforeInstalledPackages(t *testing.T) {
	py := python(t, "numpy")
	code := writeCode(t, "import numpy\n\ndef init():\n    pass\n\ndef run(raw_data):\n    return numpy.WHO\n")
	if err := os.WriteFile(filepath.Join(code, "numpy.py"), []byte("WHO = 'the code folder'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, py, code, "score.py", t.TempDir())
	if got := do(t, "POST", r.url+"/score", "x"); got.status != 200 || got.body != `"the code folder"` {
		t.Errorf("POST /score = %d %q, want the code folder's numpy", got.status, got.body)
	}
}

// A failing init(), a script without run() and a script that does not import all stop the
// server with status 3 and the reason on stderr, before it listens.
func TestStartupFailures(t *testing.T) {
	py := python(t)
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"init raises", "def init():\n    raise RuntimeError('model file missing')\n\ndef run(d):\n    return d\n",
			[]string{"Traceback", "RuntimeError: model file missing", "init() failed"}},
		{"no run", "def init():\n    pass\n", []string{"does not define a run() function"}},
		{"import error", "import no_such_module_xyz\n", []string{"ModuleNotFoundError", "no_such_module_xyz", "importing"}},
		{"varargs run", "def init():\n    pass\n\ndef run(*a):\n    pass\n", []string{"cannot accept positional-only arguments, *args"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := launch(t, py, writeCode(t, tc.src), "score.py", t.TempDir())
			if code := r.exitCode(t); code != 3 {
				t.Errorf("exit status %d, want 3", code)
			}
			stderr := r.errb.String()
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(r.out.String(), "Listening") {
				t.Errorf("the server listened:\n%s", r.out)
			}
		})
	}
}

const encodingScript = `import json

def init():
    pass

def run(raw_data, request_headers):
    if raw_data == "fail":
        raise ValueError("bad input")
    if raw_data == "str":
        return "hello"
    if raw_data == "none":
        return None
    if raw_data == "bytes":
        return b"\x00raw"
    if raw_data == "set":
        return {1, 2}
    if raw_data == "header":
        return request_headers.get("X-Custom")
    return {"got": raw_data}
`

// run()'s results are encoded as Azure's server does; an exception answers 500 with its
// message (and the traceback on stderr) and the server goes on serving.
func TestRunResultsAndErrors(t *testing.T) {
	py := python(t)
	r := start(t, py, writeCode(t, encodingScript), "score.py", t.TempDir())
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want, ctype              string
	}{
		{"dict", "POST", "/score", `{"a": 1}`, 200, `{"got": "{\"a\": 1}"}`, "application/json"},
		{"str is JSON-quoted", "POST", "/score", "str", 200, `"hello"`, "application/json"},
		{"None is {}", "POST", "/score", "none", 200, `{}`, "application/json"},
		{"bytes as is", "POST", "/score", "bytes", 200, "\x00raw", "application/octet-stream"},
		{"headers", "POST", "/score", "header", 200, `"yes"`, "application/json"},
		{"GET query as JSON", "GET", "/score?a=1&b=x", "", 200, `{"got": "{\"a\": 1, \"b\": \"x\"}"}`, "application/json"},
		{"exception", "POST", "/score", "fail", 500, `{"message": "run() failed: ValueError: bad input"}`, "application/json"},
		{"not JSON-encodable", "POST", "/score", "set", 500, "", "application/json"},
		{"bad UTF-8", "POST", "/score", "\xff\xfe", 400, "", "application/json"},
		{"unknown path", "GET", "/nope", "", 404, `{"message": "Not found: /nope"}`, "application/json"},
		{"method", "PUT", "/score", "", 405, `{"message": "Method not allowed"}`, "application/json"},
		{"after a failure", "POST", "/score", "x", 200, `{"got": "x"}`, "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := do(t, tc.method, r.url+tc.path, tc.body, "X-Custom", "yes")
			if got.status != tc.status || (tc.want != "" && got.body != tc.want) || got.header.Get("Content-Type") != tc.ctype {
				t.Errorf("%s %s = %d %s %q, want %d %s %q", tc.method, tc.path, got.status,
					got.header.Get("Content-Type"), got.body, tc.status, tc.ctype, tc.want)
			}
		})
	}
	if !strings.Contains(r.errb.String(), "ValueError: bad input") || !strings.Contains(r.errb.String(), "Traceback") {
		t.Errorf("stderr lacks the traceback of run():\n%s", r.errb)
	}
}

const concurrencyScript = `import os, sys, threading, time

lock = threading.Lock()
active = 0
most = 0

def init():
    pass

def run(raw_data):
    global active, most
    if raw_data == "most":
        return most
    with lock:
        active += 1
        most = max(most, active)
    sys.stdout.write("started\n")  # one write: two threads' lines stay apart
    sys.stdout.flush()
    try:
        if raw_data == "block":
            # Waits for the test to create the release file (the workload, not a test wait).
            release = os.path.join(os.environ["AZUREML_MODEL_DIR"], "release")
            deadline = time.time() + 60
            while not os.path.exists(release) and time.time() < deadline:
                time.sleep(0.01)
        else:
            time.sleep(0.05)
    finally:
        with lock:
            active -= 1
    return "done"
`

// Requests are served on threads (the liveness route answers while run() works) and run()
// calls do not overlap unless WORKER_COUNT allows it.
func TestConcurrency(t *testing.T) {
	py := python(t)
	t.Run("serialised by default", func(t *testing.T) {
		model := t.TempDir()
		r := start(t, py, writeCode(t, concurrencyScript), "score.py", model)
		blocked := make(chan string, 1)
		go func() { blocked <- sendBody(t, r.url+"/score", "block") }()
		if r.out.wait("started", 1) == "" {
			t.Fatalf("run() did not start:\n%s", r.out)
		}
		if got := do(t, "GET", r.url+"/", ""); got.body != "Healthy" {
			t.Errorf("GET / while run() works = %d %q", got.status, got.body)
		}
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				if got := sendBody(t, r.url+"/score", "work"); got != `"done"` {
					t.Errorf("POST /score = %q", got)
				}
			})
		}
		if err := os.WriteFile(filepath.Join(model, "release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if got := <-blocked; got != `"done"` {
			t.Errorf("the blocked POST /score = %q", got)
		}
		if got := do(t, "POST", r.url+"/score", "most"); got.body != "1" {
			t.Errorf("most run() calls at once = %s, want 1", got.body)
		}
	})
	t.Run("WORKER_COUNT=2", func(t *testing.T) {
		model := t.TempDir()
		r := start(t, py, writeCode(t, concurrencyScript), "score.py", model, "WORKER_COUNT=2")
		results := make(chan string, 2)
		for range 2 {
			go func() { results <- sendBody(t, r.url+"/score", "block") }()
		}
		// Both block until released: the second starting proves they overlap.
		if r.out.wait("started", 2) == "" {
			t.Fatalf("two run() calls did not run at once:\n%s", r.out)
		}
		if err := os.WriteFile(filepath.Join(model, "release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got := <-results; got != `"done"` {
				t.Errorf("POST /score = %q", got)
			}
		}
	})
}

// When nobody reads the replica's output any more (its supervisor was killed and the pipe's
// reading end closed with it), the replica drains: the user's print() in run() does not fail,
// every answer says "x-hangar-replica: draining" and closes its connection (the router then
// takes the replica out of its rotation), the health route answers 503, and the server exits by
// itself once quiet.
func TestDrainsWhenItsSupervisorIsGone(t *testing.T) {
	py := python(t)
	r := start(t, py, writeCode(t, "def init():\n    pass\n\ndef run(raw_data):\n    print('scoring', raw_data)\n    return raw_data\n"),
		"score.py", t.TempDir())
	if got := do(t, "POST", r.url+"/score", "a"); got.status != 200 || got.header.Get("x-hangar-replica") != "" {
		t.Fatalf("before: %d %q, header %q", got.status, got.body, got.header.Get("x-hangar-replica"))
	}
	r.stdout.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := do(t, "GET", r.url+"/", "")
		if got.status == 503 && got.header.Get("x-hangar-replica") == "draining" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET / still %d %q 30s after the output's reader left, want 503 draining", got.status, got.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := do(t, "POST", r.url+"/score", "b")
	if got.status != 200 || got.body != `"b"` || got.header.Get("x-hangar-replica") != "draining" || !got.closed {
		t.Fatalf("POST /score while draining = %d %q, headers %v; want its answer, draining, Connection: close", got.status, got.body, got.header)
	}
	if code := r.exitCode(t); code != 0 {
		t.Errorf("the drained server exited with %d, want 0\nstderr:\n%s", code, r.errb)
	}
}

const headersScript = `import json

def init():
    pass

def run(raw_data, request_headers):
    print("run() called", flush=True)
    return sorted(k.lower() for k in request_headers)
`

// A replica answers only its workspace's router: without the replica's secret a request is
// refused (401; with another secret 403) whatever its method or path, and run() never runs; only
// the health route answers anyone, and says nothing but "Healthy". The secret is not among the
// headers run() gets.
func TestOnlyTheRouterIsAnswered(t *testing.T) {
	py := python(t)
	r := start(t, py, writeCode(t, headersScript), "score.py", t.TempDir())
	for _, secret := range []string{"", "hrs1.guessed", testSecret + "x", testSecret[:len(testSecret)-1]} {
		want := 403
		if secret == "" {
			want = 401
		}
		for _, c := range []struct{ method, path string }{
			{"POST", "/score"}, {"GET", "/score?data=1"}, {"OPTIONS", "/score"}, {"PUT", "/score"},
			{"POST", "/"}, {"GET", "/swagger.json"},
		} {
			got := do(t, c.method, r.url+c.path, `{"data": [1]}`, SecretHeader, secret)
			if got.status != want || !strings.Contains(got.body, "answers only its workspace's router") {
				t.Errorf("%s %s with secret %q = %d %q, want %d saying why", c.method, c.path, secret, got.status, got.body, want)
			}
		}
	}
	if strings.Contains(r.out.String(), "run() called") {
		t.Fatalf("run() ran for a request without the secret:\n%s", r.out)
	}
	if got := do(t, "GET", r.url+"/", "", SecretHeader, ""); got.status != 200 || got.body != "Healthy" {
		t.Errorf("GET / without the secret = %d %q, want the health route's 200 Healthy", got.status, got.body)
	}
	got := do(t, "POST", r.url+"/score", "x", "X-Custom", "yes")
	if got.status != 200 || !strings.Contains(got.body, `"x-custom"`) {
		t.Fatalf("POST /score with the secret = %d %q, want run()'s answer", got.status, got.body)
	}
	if strings.Contains(got.body, strings.ToLower(SecretHeader)) {
		t.Errorf("run() got the replica's secret among its headers: %s", got.body)
	}
}

// Without a secret the scoring server does not start: it would answer anyone.
func TestNoSecretNoServer(t *testing.T) {
	py := python(t)
	r := launch(t, py, writeCode(t, headersScript), "score.py", t.TempDir(), SecretEnv+"=")
	if code := r.exitCode(t); code != 3 {
		t.Errorf("exit status %d, want 3", code)
	}
	if !strings.Contains(r.errb.String(), SecretEnv+" is not set") {
		t.Errorf("stderr does not say why:\n%s", r.errb)
	}
}

// The server listens only on HANGAR_SERVE_HOST: on 127.0.0.1 it cannot be reached at the
// machine's other addresses.
func TestListensOnlyOnItsHost(t *testing.T) {
	py := python(t)
	r := start(t, py, writeCode(t, headersScript), "score.py", t.TempDir())
	_, port, _ := strings.Cut(strings.TrimPrefix(r.url, "http://"), ":")
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, a := range addrs {
		ip, ok := a.(*net.IPNet)
		if !ok || ip.IP.IsLoopback() || ip.IP.IsLinkLocalUnicast() {
			continue
		}
		tried++
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), port), 2*time.Second); err == nil {
			c.Close()
			t.Errorf("the server bound to 127.0.0.1 answers at %s", ip.IP)
		}
	}
	if tried == 0 {
		t.Logf("this machine has no address but loopback: nothing else to try")
	}
}
