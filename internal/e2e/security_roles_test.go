package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/home"
)

// Attacks on the roles (issue 27): what a user below owner sends straight to the API, as the
// reproductions did, and through the CLI.

// roleUsers creates a user per role name given (name → role) and returns their tokens, and the
// server's URL.
func roleUsers(t *testing.T, w *ws, users map[string]string) (string, map[string]string) {
	t.Helper()
	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for name, role := range users {
		tokens[name] = strings.TrimSpace(w.ok("user", "create", name, "--role", role).stdout)
	}
	return si.URL, tokens
}

// roleCall sends body (none when "") to url with method and token, and returns the status and the
// answer with JSON's escaped quotes read back.
func roleCall(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.ReplaceAll(string(b), `\"`, `"`)
}

// loggedIn is a CLI user logged in to url with token.
func loggedIn(t *testing.T, w *ws, url, token string) *user {
	t.Helper()
	u := w.user(url)
	if r := u.run(token, "login", "--with-token"); r.code != 0 {
		t.Fatalf("login: exit %d, %s", r.code, r.stderr)
	}
	return u
}

// Issue 27's reproduction 1: a compute operator posts a cluster whose create hook reads the
// workspace's token and key. It is refused with 403 naming the field and the role, nothing is
// stored (so no hook can ever run), and the same through the CLI (create, and update --set). The
// operator still creates and scales a cluster of the local provider, and scales one an owner
// gave hooks to. Before the fix the post answered 201 and the hook ran within seconds.
func TestSecurityComputeOperatorCannotSetProviderHooks(t *testing.T) {
	w := newWS(t)
	url, tok := roleUsers(t, w, map[string]string{"olga": "compute-operator", "carl": "contributor"})
	out := filepath.Join(t.TempDir(), "out")
	body := fmt.Sprintf(`{"name":"hookd","type":"cluster","cluster":{"size":"local-quarter","min_instances":1,"max_instances":1,`+
		`"provider":{"type":"command","create":"wc -c $HANGAR_HOME/token $HANGAR_HOME/secret.key > %s; exit 1","delete":"true","timeout":30}}}`, out)
	for name, want := range map[string][]string{
		"olga": {"user olga has the role compute-operator", "cluster.provider.create is a command the server runs", "only the role owner"},
		"carl": {"user carl has the role contributor", "needs the role owner or compute-operator"},
	} {
		status, msg := roleCall(t, http.MethodPost, url+"/api/computes", tok[name], body)
		if status != http.StatusForbidden {
			t.Fatalf("%s's cluster with a create hook: %d %s, want 403", name, status, msg)
		}
		for _, s := range want {
			if !strings.Contains(msg, s) {
				t.Errorf("%s's refusal %s does not say %q", name, msg, s)
			}
		}
	}
	if r := w.run("compute", "show", "hookd"); r.code == 0 {
		t.Fatalf("the refused cluster exists:\n%s", r.stdout)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the hook ran: %s exists (%v)", out, err)
	}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hook.yml": "name: hooky\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\n" +
			"provider: {type: command, create: 'cat $HANGAR_HOME/token', delete: 'true'}\n",
		"pool.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\nidle_time_before_scale_down: 60\n",
		"owned.yml": "name: owned\ntype: amlcompute\nsize: local-quarter\nmin_instances: 0\nmax_instances: 1\n" +
			"provider: {type: command, create: 'exit 1', delete: 'true'}\n",
	})
	olga := loggedIn(t, w, url, tok["olga"])
	if r := olga.run("", "compute", "create", "-f", filepath.Join(dir, "hook.yml")); r.code == 0 ||
		!strings.Contains(r.stderr, "cluster.provider.create") || !strings.Contains(r.stderr, "role owner") {
		t.Errorf("olga's compute create with a hook: exit %d, %s; want a refusal naming the field and the role", r.code, r.stderr)
	}
	olga.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	olga.ok("compute", "update", "-f", filepath.Join(dir, "pool.yml"), "--set", "max_instances=2")
	w.ok("compute", "create", "-f", filepath.Join(dir, "owned.yml")) // the owner sets hooks
	olga.ok("compute", "update", "-f", filepath.Join(dir, "owned.yml"), "--set", "max_instances=2")
	if r := olga.run("", "compute", "update", "-f", filepath.Join(dir, "owned.yml"), "--set", "provider.create=cat $HANGAR_HOME/token"); r.code == 0 ||
		!strings.Contains(r.stderr, "cluster.provider.create") {
		t.Errorf("olga's update --set provider.create: exit %d, %s; want a refusal naming the field", r.code, r.stderr)
	}
	var shown struct {
		Spec struct {
			Cluster struct {
				MaxInstances int `json:"max_instances"`
				Provider     struct{ Create string }
			}
		}
	}
	if err := json.Unmarshal([]byte(w.ok("compute", "show", "owned", "-o", "json").stdout), &shown); err != nil {
		t.Fatal(err)
	}
	if c := shown.Spec.Cluster; c.MaxInstances != 2 || c.Provider.Create != "exit 1" {
		t.Errorf("owned after olga's updates: %+v, want max_instances 2 and the owner's hook", c)
	}
}

// A compute operator's setup script names a workspace secret, as a job's variable would: its
// text is not bound (before the fix the script's run got the secret's value, which it could
// print reversed, past the log's redaction, for the operator to read in compute logs).
func TestSecuritySetupScriptReadsNoSecret(t *testing.T) {
	w := newWS(t)
	url, tok := roleUsers(t, w, map[string]string{"olga": "compute-operator"})
	const value = "s3cret-value-of-hf"
	if r := w.runStdin(value+"\n", "secret", "set", "hf_token"); r.code != 0 {
		t.Fatalf("secret set: %s", r.stderr)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"dev.yml": "name: dev1\ntype: computeinstance\nsize: local-quarter\n" +
			"setup_scripts:\n  creation_script: {path: create.sh}\n",
		"create.sh": "echo \"got: $(echo '${{secrets.hf_token}}' | rev)\"\n",
	})
	olga := loggedIn(t, w, url, tok["olga"])
	olga.ok("compute", "create", "-f", filepath.Join(dir, "dev.yml"))
	in := w.waitInstance("dev1", 2*time.Minute, "Running")
	if len(in.Scripts) != 1 {
		t.Fatalf("scripts: %+v", in.Scripts)
	}
	logs := olga.ok("compute", "logs", "dev1").stdout
	reversed := func(s string) string {
		b := []byte(s)
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return string(b)
	}
	if strings.Contains(logs, reversed(value)) {
		t.Fatalf("the operator's setup script read the secret:\n%s", logs)
	}
	if want := "got: " + reversed("${{secrets.hf_token}}"); !strings.Contains(logs, want) {
		t.Errorf("compute logs lacks %q (the script's text as written):\n%s", want, logs)
	}
}

// Issue 27: /api/health without a token told the workspace's directory and the server's pid.
// Now a caller without a token learns that the server answers and nothing of the machine; a
// user's token (a reader's) gets the pid, and `hangar server status` still works.
func TestSecurityHealthSaysNothingWithoutToken(t *testing.T) {
	w := newWS(t)
	url, tok := roleUsers(t, w, map[string]string{"rita": "reader"})
	status, body := roleCall(t, http.MethodGet, url+"/api/health", "", "")
	var h map[string]any
	if err := json.Unmarshal([]byte(body), &h); status != http.StatusOK || err != nil || h["ok"] != true {
		t.Fatalf("health without a token: %d %s", status, body)
	}
	if _, ok := h["pid"]; ok || strings.Contains(body, w.home) || h["workspace"] != nil {
		t.Errorf("health without a token tells the machine: %s", body)
	}
	_, body = roleCall(t, http.MethodGet, url+"/api/health", tok["rita"], "")
	if !strings.Contains(body, w.home) || !strings.Contains(body, fmt.Sprintf(`"pid":%d`, w.server.Process.Pid)) {
		t.Errorf("health with a reader's token: %s, want the workspace and the pid", body)
	}
	if st := w.ok("server", "status").stdout; !strings.Contains(st, fmt.Sprintf("pid %d", w.server.Process.Pid)) {
		t.Errorf("server status: %s", st)
	}
}

// Issue 27: a job whose spec gives "command" twice was accepted (the last one won), so a value
// could pass a proxy's check as one command and run as another. It is refused with 400 naming
// the key, and no job is made; a key that differs only in case is the same field, and refused.
func TestSecurityDuplicateJSONKeysRefused(t *testing.T) {
	w := newWS(t)
	url, tok := roleUsers(t, w, map[string]string{"carl": "contributor"})
	for _, body := range []string{
		`{"spec":{"command":"echo checked","command":"echo smuggled"}}`,
		`{"spec":{"command":"echo checked","Command":"echo smuggled"}}`,
	} {
		status, msg := roleCall(t, http.MethodPost, url+"/api/jobs", tok["carl"], body)
		if status != http.StatusBadRequest || !strings.Contains(msg, `"command"`) || !strings.Contains(msg, "in spec") {
			t.Errorf("POST /api/jobs %s: %d %s, want 400 naming the key", body, status, msg)
		}
	}
	if list := w.ok("job", "list", "-o", "json").stdout; strings.TrimSpace(list) != "[]" {
		t.Errorf("a refused job was created: %s", list)
	}
}
