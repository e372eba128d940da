package studio

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The studio's own scripts never turn text into markup: every job name, log line, tag and
// metric name reaches the page as text. (The vendored uPlot writes text with textContent too.)
func TestNoHTMLSinks(t *testing.T) {
	sinks := regexp.MustCompile(`\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*["']on`)
	files, err := fs.Glob(assets, "assets/*.js")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasPrefix(f, "assets/uPlot") {
			continue
		}
		b, err := fs.ReadFile(assets, f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := sinks.FindString(line); m != "" {
				t.Errorf("%s:%d: %s turns text into markup or code: build nodes with H.el / textContent", f, i+1, m)
			}
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("checked %d scripts, want the studio's 4", checked)
	}
}

// Every file index.html loads is embedded, and served with the security headers.
func TestIndexLoadsEmbeddedFiles(t *testing.T) {
	h := Handler()
	index := get(t, h, "/")
	refs := regexp.MustCompile(`(?:src|href)="(/[^"]*)"`).FindAllStringSubmatch(index.Body.String(), -1)
	if len(refs) < 6 {
		t.Fatalf("index.html loads %d files: %v", len(refs), refs)
	}
	for _, r := range refs {
		rec := get(t, h, r[1])
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d", r[1], rec.Code)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); csp != ContentSecurityPolicy {
			t.Errorf("%s: Content-Security-Policy %q", r[1], csp)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", r[1])
		}
	}
	for _, p := range []string{"/studio/missing.js", "/studio/../studio.go"} {
		if rec := get(t, h, p); rec.Code == http.StatusOK {
			t.Errorf("%s: %d, want an error", p, rec.Code)
		}
	}
}

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec
}
