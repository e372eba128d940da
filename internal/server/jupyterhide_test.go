package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hangar-ml/hangar/internal/controller/instances"
)

// The secret never comes out of the hider, wherever the reads split it; everything else does,
// unchanged.
func TestSecretHider(t *testing.T) {
	const secret = "0123456789abcdef"
	for _, in := range []string{
		"", "no secret here", secret, "a" + secret + "b" + secret, strings.Repeat("x", 70000) + secret + strings.Repeat("y", 5),
		"ends with a partial " + secret[:7], secret[:3] + secret + secret[3:],
	} {
		want := strings.ReplaceAll(in, secret, hiddenSecret)
		for name, r := range map[string]io.Reader{
			"whole":      strings.NewReader(in),
			"byte-wise":  iotest.OneByteReader(strings.NewReader(in)),
			"half reads": iotest.HalfReader(strings.NewReader(in)),
		} {
			h := &secretHider{r: io.NopCloser(r), secret: []byte(secret)}
			got, err := io.ReadAll(iotest.OneByteReader(h))
			if err != nil || string(got) != want {
				t.Errorf("%s: %.60q → %.60q, %v; want %.60q", name, in, got, err, want)
			}
		}
	}
}

// What Jupyter answers reaches the browser without the secret the proxy sent it (an agent of an
// older version runs Jupyter with it as its token, and Jupyter's pages embed it): in the page,
// in a redirect, in a gzip-compressed answer (the browser's Accept-Encoding stays here: Go's
// transport then takes gzip only, and hands the body over decompressed).
func TestJupyterProxyHidesTheKey(t *testing.T) {
	const key = "5ecret5ecret5ecret"
	var asked string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.Header.Get("Accept-Encoding")
		switch r.URL.Path {
		case "/instances/dev/jupyter/tree":
			w.Write([]byte(`<body data-jupyter-api-token="` + key + `"><a href="/tree?token=` + key + `">`))
		case "/instances/dev/jupyter/login":
			w.Header().Set("Location", "/instances/dev/jupyter/tree?token="+key)
			w.WriteHeader(http.StatusFound)
		case "/instances/dev/jupyter/api/config":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write([]byte(`{"token": "` + key + `"}`))
			zw.Close()
		}
	}))
	defer upstream.Close()
	s := &Server{log: slog.New(slog.DiscardHandler)}
	rp := s.instances.jupyterReverse(&instances.JupyterTarget{Addr: strings.TrimPrefix(upstream.URL, "http://"), Token: key})
	for _, p := range []string{"tree", "login", "api/config"} {
		req := httptest.NewRequest(http.MethodGet, "http://hangar.example/instances/dev/jupyter/"+p, nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, req)
		var all bytes.Buffer
		rec.Header().Write(&all)
		all.Write(rec.Body.Bytes())
		if strings.Contains(all.String(), key) || !strings.Contains(all.String(), hiddenSecret) {
			t.Errorf("%s: the browser gets\n%s", p, all.String())
		}
		if asked == "gzip, deflate, br" {
			t.Errorf("%s: the browser's Accept-Encoding went to Jupyter", p)
		}
	}
}
