package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// An instance on the local provider starts Jupyter (Notebook, as CI installs it:
// scripts/setup/python.sh); compute show prints its URL on the server; its owner (a reader, by
// create_on_behalf_of) opens it and starts a kernel through the proxied REST API, which keeps the
// instance busy; another reader gets 403, no token 401; stopping the instance leaves no Jupyter
// process and no kernel.
func TestInstanceJupyter(t *testing.T) {
	w := newWSEnv(t, []string{"HANGAR_TEST_INSTANCE_MINUTE=200ms", "HANGAR_TEST_INSTANCE_CPU_THRESHOLD=101"})
	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, name := range []string{"opal", "rita"} {
		tokens[name] = strings.TrimSpace(w.ok("user", "create", name, "--role", "reader").stdout)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"nb.yml": `$schema: https://azuremlschemas.azureedge.net/latest/computeInstance.schema.json
name: nb1
type: computeinstance
size: local-quarter
create_on_behalf_of: {user_object_id: opal}
`})
	w.ok("compute", "create", "-f", filepath.Join(dir, "nb.yml"))
	w.waitInstance("nb1", 2*time.Minute, "Running")
	url := strings.TrimSuffix(si.URL, "/") + "/instances/nb1/jupyter/"
	testwait.Within(t, 2*time.Minute, "compute show to say Jupyter runs", func() bool {
		j := w.instance("nb1").Jupyter
		if strings.HasPrefix(j, "not installed") {
			t.Fatalf("Jupyter %s: scripts/setup/python.sh installs Debian's jupyter-notebook", j)
		}
		return strings.HasPrefix(j, "running")
	})
	if show := w.ok("compute", "show", "nb1").stdout; !strings.Contains(show, "running: "+url) {
		t.Fatalf("compute show lacks the Jupyter URL %s:\n%s", url, show)
	}
	hc := w.client().HTTPClient()

	page := jupyterCall(t, hc, http.MethodGet, url+"tree", tokens["opal"], http.StatusOK)
	if !strings.Contains(page, "Jupyter") || !strings.Contains(page, "/instances/nb1/jupyter/") {
		t.Fatalf("the owner's GET is not Jupyter's page under the instance's path:\n%.600s", page)
	}
	testwait.Within(t, time.Minute, "compute show to say no kernel runs", func() bool {
		return strings.Contains(w.instance("nb1").Idle, "no Jupyter kernel")
	})
	var kernel struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(jupyterCall(t, hc, http.MethodPost, url+"api/kernels", tokens["opal"], http.StatusCreated)), &kernel); err != nil || kernel.ID == "" {
		t.Fatalf("the kernel Jupyter started: %v %+v", err, kernel)
	}
	testwait.Within(t, time.Minute, "compute show to say a kernel keeps the instance busy", func() bool {
		idle := w.instance("nb1").Idle
		return strings.HasPrefix(idle, "busy:") && strings.Contains(idle, "1 Jupyter kernel")
	})
	kernelPIDs := processesWith(kernel.ID)
	if len(kernelPIDs) == 0 {
		t.Fatalf("no process of kernel %s", kernel.ID)
	}
	// A kernel runs the owner's code as the agent's user: like a run, it must not see the
	// workspace's token and secret key, nor the agent's work dir (read through the kernel's own
	// view of the filesystem, /proc/<pid>/root; python3 is the control that the view is readable).
	for _, pid := range kernelPIDs {
		view := fmt.Sprintf("/proc/%d/root", pid)
		if _, err := os.Stat(view + "/usr/bin/python3"); err != nil {
			t.Fatalf("the kernel's view of the filesystem: %v", err)
		}
		for _, secret := range []string{filepath.Join(w.home, "token"), filepath.Join(w.home, "secret.key"), filepath.Join(w.home, "workspace.db")} {
			if _, err := os.Stat(view + secret); err == nil {
				t.Errorf("the Jupyter kernel (pid %d) sees %s", pid, secret)
			}
		}
	}
	jupyterWebsocket(t, hc, url+"api/kernels/"+kernel.ID+"/channels", tokens["opal"])

	jupyterCall(t, hc, http.MethodGet, url+"api/kernels", tokens["rita"], http.StatusForbidden)
	jupyterCall(t, hc, http.MethodGet, url+"api/kernels", "", http.StatusUnauthorized)

	w.ok("compute", "stop", "nb1")
	w.waitInstance("nb1", 2*time.Minute, "Stopped")
	testwait.Within(t, 30*time.Second, "Jupyter and its kernel to be gone", func() bool {
		return len(processesWith(kernel.ID))+len(processesWith("/instances/nb1/jupyter/")) == 0
	})
	if j := w.instance("nb1").Jupyter; !strings.HasPrefix(j, "not running") {
		t.Errorf("compute show of a stopped instance: Jupyter %q", j)
	}
}

// jupyterCall calls the proxy as a user's token ("" none) and checks the status.
func jupyterCall(t *testing.T, hc *http.Client, method, url, token string, want int) string {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %.400s", method, url, resp.StatusCode, want, b)
	}
	return string(b)
}

// jupyterWebsocket opens a kernel's websocket through the proxy: Jupyter switches protocols.
func jupyterWebsocket(t *testing.T, hc *http.Client, url, token string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols || !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 400))
		t.Fatalf("websocket %s: %d %s", url, resp.StatusCode, b)
	}
}

// processesWith lists the processes with an argument containing s.
func processesWith(s string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), s) && pid != os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}
