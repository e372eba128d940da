package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// The studio's endpoint pages, as a user reads them in the browser: the endpoint in the list,
// its deployment's state, ready replicas and the requests the router counted, and the replica's
// run linked.
func TestStudioEndpointPage(t *testing.T) {
	ctx := browser(t)
	w, dir := endpointWS(t)
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "blue.yml"), "--all-traffic")
	s := w.scorer("my-endpoint")
	for i := range 20 {
		if code, _, body := s.score(i, ""); code != 200 {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
	}
	var dv struct {
		Replicas []struct{ Run string } `json:"replicas"`
	}
	w.jsonOut(&dv, "online-deployment", "show", "-n", "blue", "-e", "my-endpoint")
	if len(dv.Replicas) != 1 {
		t.Fatalf("replicas: %+v", dv.Replicas)
	}

	link := strings.TrimSpace(w.ok("studio").stdout)
	base, _, _ := strings.Cut(link, "#login=")
	p := page{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	p.open(strings.TrimPrefix(link, base))
	p.wait("the jobs list", `!!document.querySelector('#jobs')`)
	p.open("#/endpoints")
	p.wait("the endpoint in the list", `!!document.querySelector('#endpoints tr[data-endpoint="my-endpoint"] a')`)
	p.open("#/endpoints/my-endpoint")
	row := `document.querySelector('#deployment-stats tr[data-deployment="blue"]')`
	p.wait("blue's state and ready replica", row+`?.textContent.includes('Succeeded') && `+row+`?.textContent.includes('1/1')`)
	p.wait("the 20 requests counted", `+(`+row+`?.querySelector('.requests-2xx')?.textContent || 0) >= 20`)
	p.wait("the replica's run linked", `[...document.querySelectorAll('#replicas a')].some(a => a.textContent === `+jsString(dv.Replicas[0].Run)+`)`)
	p.shot("endpoint")
}
