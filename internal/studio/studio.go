// Package studio holds the web studio: static pages, styles and scripts embedded in the binary
// (no Node toolchain to build or run it), served by internal/server at /. The pages read the
// workspace API with the session cookie internal/server sets at login.
//
// The scripts treat every job name, log line, tag and metric name as text: they build the page
// with textContent and DOM nodes, never innerHTML, and the Content-Security-Policy sent with
// every file allows scripts from this server only (no inline script, no eval, no other host).
//
// Vendored: uPlot 1.6.30 (MIT licence, assets/uPlot.LICENSE), the files dist/uPlot.iife.min.js
// and dist/uPlot.min.css of the npm package "uplot", copied unchanged.
package studio

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// ContentSecurityPolicy is sent with every studio file: scripts, styles, images and requests
// from this origin only; no plugins, no framing, no <base> or form posts elsewhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the studio: index.html at / and the files under /studio/.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		// A new binary brings new files, and embedded files carry no date to revalidate by:
		// the pages are small, the browser fetches them again.
		h.Set("Cache-Control", "no-cache")
		p := strings.TrimPrefix(r.URL.Path, "/studio")
		if p == "" {
			p = "/" // the file server answers a directory with its index.html
		}
		if path.Clean(p) != p {
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = p
		files.ServeHTTP(w, r2)
	})
}
