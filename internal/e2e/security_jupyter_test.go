package e2e

import (
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

	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// The owner of a compute instance opens its Jupyter through the workspace, as the studio does:
// the tree, a notebook's page, the contents and status APIs, a kernel and its websocket, the
// answers' headers and cookies. Everything that looks like a token in what the browser got is
// then tried against every port listening on this machine, as an attacker would to reach
// Jupyter without Hangar (after the owner lost access, say): none opens Jupyter, and no port
// but the workspace server's serves it without a token either.
func TestSecurityJupyterTokenNeverReachesTheBrowser(t *testing.T) {
	w := newWSEnv(t, []string{"HANGAR_TEST_INSTANCE_MINUTE=200ms", "HANGAR_TEST_INSTANCE_CPU_THRESHOLD=101"})
	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	owner := strings.TrimSpace(w.ok("user", "create", "opal", "--role", "reader").stdout)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"nb.yml": "$schema: https://azuremlschemas.azureedge.net/latest/computeInstance.schema.json\n" +
		"name: nb1\ntype: computeinstance\nsize: local-quarter\ncreate_on_behalf_of: {user_object_id: opal}\n"})
	w.ok("compute", "create", "-f", filepath.Join(dir, "nb.yml"))
	w.waitInstance("nb1", 2*time.Minute, "Running")
	last := ""
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(w.home, "local", "nodes", "*", "jupyter.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
			t.Logf("Jupyter's state last seen: %s", last)
		}
	})
	testwait.Within(t, 2*time.Minute, "compute show to say Jupyter runs", func() bool {
		j := w.instance("nb1").Jupyter
		last = j
		if strings.HasPrefix(j, "not installed") {
			t.Fatalf("Jupyter %s: scripts/setup/python.sh installs Debian's jupyter-notebook", j)
		}
		return strings.HasPrefix(j, "running")
	})
	base := "/instances/nb1/jupyter/"
	url := strings.TrimSuffix(si.URL, "/") + base
	hc := *w.client().HTTPClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse } // a redirect is an answer too

	var got strings.Builder // every header and body the browser got
	call := func(method, path, body string) string {
		t.Helper()
		req, err := http.NewRequest(method, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+owner)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		resp.Header.Write(&got)
		got.Write(b)
		if resp.StatusCode >= 400 {
			t.Fatalf("%s %s through the proxy: %d %.300s", method, path, resp.StatusCode, b)
		}
		return string(b)
	}
	call("GET", "", "")
	if page := call("GET", "tree", ""); !strings.Contains(page, base) {
		t.Fatalf("the tree page is not Jupyter's under %s:\n%.400s", base, page)
	}
	created := call("POST", "api/contents", `{"type": "notebook"}`)
	m := regexp.MustCompile(`"path": ?"([^"]+\.ipynb)"`).FindStringSubmatch(created)
	if m == nil {
		t.Fatalf("no notebook created: %s", created)
	}
	call("GET", "notebooks/"+m[1], "")
	call("GET", "api/contents", "")
	call("GET", "api/status", "")
	kernel := call("POST", "api/kernels", "")
	call("GET", "api/kernels", "")
	kid := regexp.MustCompile(`"id": ?"([0-9a-f-]+)"`).FindStringSubmatch(kernel)
	if kid == nil {
		t.Fatalf("no kernel started: %s", kernel)
	}
	jupyterWebsocket(t, &hc, url+"api/kernels/"+kid[1]+"/channels", owner)

	seen := got.String()
	leaked := tokenCandidates(seen)
	if strings.Contains(seen, "data-jupyter-api-token=\"") && !strings.Contains(seen, "data-jupyter-api-token=\"\"") {
		t.Errorf("a page carries data-jupyter-api-token: %v", leaked)
	}
	server, err := net.ResolveTCPAddr("tcp", strings.TrimPrefix(strings.TrimPrefix(si.URL, "http://"), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	ports := listeningHTTP(t, server.Port)
	t.Logf("tried %d token-like values from the browser's answers on %d HTTP ports of this machine", len(leaked), len(ports))
	for _, addr := range ports {
		for _, tok := range append([]string{""}, leaked...) {
			if st, body := jupyterDirect(addr, base, tok); st == http.StatusOK && strings.Contains(body, `"type"`) {
				t.Errorf("Jupyter answers at %s without Hangar, with token %q from the browser's pages: %.200s", addr, tok, body)
			}
		}
	}
}

// tokenCandidates is what looks like a credential in s: the values of token= and "token":
// settings, and long hex strings.
func tokenCandidates(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)token["']?\s*[=:]\s*["']?([A-Za-z0-9_\-]{16,})`),
		regexp.MustCompile(`\b([0-9a-f]{40,})\b`),
	} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}

// listeningHTTP lists this machine's listening TCP ports (other than skip) that answer HTTP.
func listeningHTTP(t *testing.T, skip int) []string {
	t.Helper()
	var out []string
	for _, l := range listening(t) {
		if l.port == skip {
			continue
		}
		host := l.ip
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		addr := net.JoinHostPort(host, strconv.Itoa(l.port))
		if st, _ := jupyterDirect(addr, "/", ""); st != 0 {
			out = append(out, addr)
		}
	}
	return out
}

// jupyterDirect asks addr for Jupyter's contents API under base with token ("" none), as a
// client that bypasses the workspace would: the status (0 when it does not answer HTTP).
func jupyterDirect(addr, base, token string) (int, string) {
	c := &http.Client{Timeout: 2 * time.Second}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s%sapi/contents", addr, base), nil)
	if err != nil {
		return 0, ""
	}
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}
