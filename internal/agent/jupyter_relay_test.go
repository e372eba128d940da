package agent

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeJupyter serves on a Unix socket what a request looked like when it arrived, and echoes a
// websocket's bytes after answering its upgrade.
func fakeJupyter(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "jupyter.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "websocket" {
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			rw.Flush()
			line, _ := rw.ReadString('\n')
			rw.WriteString("echo " + line)
			rw.Flush()
			return
		}
		io.WriteString(w, "host="+r.Host+" auth="+r.Header.Get("Authorization")+" cookie="+r.Header.Get("Cookie")+" path="+r.URL.Path)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// The relay lets only the workspace server's requests through (the key), leaves the key and the
// caller's cookies behind, keeps the Host (Jupyter checks a websocket's Origin against it), and
// carries websockets.
func TestJupyterRelay(t *testing.T) {
	sock := fakeJupyter(t)
	rl, err := newJupyterRelay("127.0.0.1", sock, "k3y", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rl.close)
	get := func(auth string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+rl.addr()+"/instances/nb/jupyter/tree", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "hangar.example:8443"
		req.Header.Set("Cookie", "hangar_studio=session")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, auth := range []string{"", "token wrong", "Bearer k3y", "token k3y2"} {
		if st, body := get(auth); st != http.StatusForbidden || !strings.Contains(body, "to the workspace server only") {
			t.Errorf("Authorization %q: %d %q, want 403", auth, st, body)
		}
	}
	if st, body := get("token k3y"); st != http.StatusOK || body != "host=hangar.example:8443 auth= cookie= path=/instances/nb/jupyter/tree" {
		t.Errorf("with the key: %d %q", st, body)
	}

	conn, err := net.Dial("tcp", rl.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "GET /instances/nb/jupyter/api/kernels/1/channels HTTP/1.1\r\nHost: h\r\nAuthorization: token k3y\r\n"+
		"Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade through the relay: %v %v", resp, err)
	}
	io.WriteString(conn, "hello\n")
	if line, err := br.ReadString('\n'); err != nil || line != "echo hello\n" {
		t.Errorf("websocket bytes through the relay: %q %v", line, err)
	}
}
