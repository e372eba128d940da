package e2e

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// replicaCall sends body straight to a replica's address, bypassing the router, as anyone who
// can reach the machine could; secret, when given, is sent as the replica's secret.
func replicaCall(t *testing.T, method, url, body, secret string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("X-Hangar-Replica-Secret", secret)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// listeners are the local addresses sockets listen on at port, as `ss -ltn` shows them.
func listeners(t *testing.T, port int) []string {
	t.Helper()
	var out []string
	for _, l := range listening(t) {
		if l.port == port {
			out = append(out, l.ip)
		}
	}
	return out
}

// listener is a listening TCP socket of this machine.
type listener struct {
	ip   string
	port int
}

// listening reads this machine's listening TCP sockets from /proc/net/tcp and tcp6 (which any
// user may read), as `ss -ltn` shows them.
func listening(t *testing.T) []listener {
	t.Helper()
	var out []listener
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // LISTEN
				continue
			}
			hexIP, hexPort, ok := strings.Cut(fields[1], ":")
			p, err := strconv.ParseUint(hexPort, 16, 16)
			if ok && err == nil {
				out = append(out, listener{ip: procIP(hexIP), port: int(p)})
			}
		}
		f.Close()
	}
	return out
}

// procIP decodes /proc/net/tcp's address: 32-bit words in the host's (little-endian) order.
func procIP(h string) string {
	b, err := hex.DecodeString(h)
	if err != nil {
		return h
	}
	for i := 0; i+4 <= len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b).String()
}

// otherAddrs are this machine's addresses other than loopback, where someone on its network
// would connect.
func otherAddrs(t *testing.T) []string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && !ip.IP.IsLoopback() && !ip.IP.IsLinkLocalUnicast() {
			out = append(out, ip.IP.String())
		}
	}
	if len(out) == 0 {
		t.Fatal("this machine has no address but loopback: the test cannot knock from elsewhere")
	}
	return out
}

// servingReplica deploys deployment file (with all traffic) and returns its one replica.
func servingReplica(t *testing.T, w *ws, file, name string) api.ReplicaView {
	t.Helper()
	w.ok("online-deployment", "create", "-f", file, "--all-traffic")
	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", name, "-e", "my-endpoint")
	for _, r := range dv.Replicas {
		if r.Status == "Running" && r.Address != "" {
			return r
		}
	}
	t.Fatalf("deployment %s has no serving replica: %+v", name, dv.Replicas)
	return api.ReplicaView{}
}

// An attacker on the machine (or its network) scans a local deployment's replica and calls it
// directly, around the router and its key: the replica listens on loopback only, refuses every
// request that lacks the replica's secret (401) or guesses it (403) and runs no user code for
// them; through the router, with the endpoint's key, it answers. Before, it listened on
// 0.0.0.0 and answered `POST /score` to anyone.
func TestSecurityReplicaAnswersOnlyTheRouter(t *testing.T) {
	w, dir := endpointWS(t)
	writeFiles(t, dir, map[string]string{"probe/score.py": scoreScript + `
_run = run
def run(raw_data):
    print("run() called with", raw_data, flush=True)
    return _run(raw_data)
`, "probe.yml": strings.Replace(deploymentYAML("probe"), "code: score\n", "code: probe\n", 1)})
	rep := servingReplica(t, w, filepath.Join(dir, "probe.yml"), "probe")
	host, portText, _ := net.SplitHostPort(rep.Address)
	port, _ := strconv.Atoi(portText)

	// ss -ltn: the scoring server listens on loopback, not on every address.
	ls := listeners(t, port)
	for _, l := range ls {
		if l != "127.0.0.1" {
			t.Errorf("the replica's port %d listens on %v, want 127.0.0.1 only", port, ls)
		}
	}
	if len(ls) == 0 {
		t.Errorf("nothing listens on the replica's port %d", port)
	}
	for _, ip := range otherAddrs(t) {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, portText), 3*time.Second); err == nil {
			c.Close()
			t.Errorf("the replica answers at %s:%d, this machine's address on its network", ip, port)
		}
	}

	// Straight to the replica's port on loopback: no secret, or a guessed one.
	url := "http://" + net.JoinHostPort(host, portText)
	for _, tc := range []struct{ method, path, secret string }{
		{"POST", "/score", ""}, {"GET", "/score?x=5", ""}, {"POST", "/score", "hrs1." + strings.Repeat("0", 64)},
		{"POST", "/score", "guess"}, {"PUT", "/score", ""}, {"POST", "/", ""}, {"GET", "/swagger.json", ""},
	} {
		want := http.StatusUnauthorized
		if tc.secret != "" {
			want = http.StatusForbidden
		}
		code, body := replicaCall(t, tc.method, url+tc.path, `{"x": 5}`, tc.secret)
		if code != want || !strings.Contains(body, "answers only its workspace's router") {
			t.Errorf("%s %s (secret %q) straight to the replica: %d %s; want %d saying why", tc.method, tc.path, tc.secret, code, body, want)
		}
	}
	// The health route answers anyone, and says nothing else.
	if code, body := replicaCall(t, "GET", url+"/", "", ""); code != 200 || body != "Healthy" {
		t.Errorf("GET / straight to the replica: %d %q, want 200 Healthy and nothing more", code, body)
	}

	// Through the router, with the endpoint's key: it answers.
	if code, a, body := w.scorer("my-endpoint").score(5, ""); code != 200 || a.Y != 15 {
		t.Fatalf("through the router: %d %s", code, body)
	}
	// The replica's log reaches the server a moment after its lines are written: wait for the
	// router's call, the last one made, before counting.
	var logs string
	testwait.Within(t, time.Minute, "the replica's log to show the router's call", func() bool {
		logs = w.deploymentLogs("probe")
		return strings.Contains(logs, "run() called")
	})
	if n := strings.Count(logs, "run() called"); n != 1 {
		t.Errorf("run() ran %d times, want once (the router's request only):\n%s", n, logs)
	}
	if !regexp.MustCompile(`POST /score 401 `).MatchString(logs) || !strings.Contains(logs, "POST /score 403 ") {
		t.Errorf("the replica's log does not show the refused calls:\n%s", logs)
	}
}

// The same attack on an image that serves by its own entrypoint (it cannot check a secret): the
// supervisor's proxy answers in its place and refuses what lacks the secret; the image's own
// port is published on loopback only.
func TestSecurityImageReplicaAnswersOnlyTheRouter(t *testing.T) {
	buildSelfServeImage(t)
	w, dir := endpointWS(t)
	writeFiles(t, dir, map[string]string{"selfserve.yml": strings.Replace(selfServeDeployment, "instance_count: 2\n", "instance_count: 1\n", 1)})
	rep := servingReplica(t, w, filepath.Join(dir, "selfserve.yml"), "selfserve")
	_, portText, _ := net.SplitHostPort(rep.Address)

	for _, secret := range []string{"", "hrs1.guessed"} {
		code, body := replicaCall(t, "POST", "http://"+rep.Address+"/predict", `{"x": 5}`, secret)
		if code != http.StatusUnauthorized && code != http.StatusForbidden || !strings.Contains(body, "answers only its workspace's router") {
			t.Errorf("POST /predict straight to the replica (secret %q): %d %s; want 401/403 saying why", secret, code, body)
		}
	}
	for _, ip := range otherAddrs(t) {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, portText), 3*time.Second); err == nil {
			c.Close()
			t.Errorf("the replica answers at %s:%s, this machine's address on its network", ip, portText)
		}
	}
	// The image's own port, as its log names it: on loopback only.
	m := regexp.MustCompile(`published on 127\.0\.0\.1:(\d+)`).FindStringSubmatch(w.logs(rep.Run))
	if m == nil {
		t.Fatalf("the replica's log does not say where the image's port is published:\n%s", w.logs(rep.Run))
	}
	for _, ip := range otherAddrs(t) {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, m[1]), 3*time.Second); err == nil {
			c.Close()
			t.Errorf("the image's own port answers at %s:%s", ip, m[1])
		}
	}

	var a selfServeAnswer
	if code := w.scorer("my-endpoint").post("/score", `{"x": 5}`, &a); code != 200 || a.Y != 15 {
		t.Fatalf("through the router: %d %+v", code, a)
	}
	if strings.Contains(fmt.Sprint(a), "hrs1.") {
		t.Errorf("the secret reached the caller: %+v", a)
	}
}
