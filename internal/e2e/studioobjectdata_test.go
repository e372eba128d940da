package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
)

// The studio's run page, as a user reads it in the browser, says where a run's data in an
// object store lies and what its node moved: the input's and the output's URIs, the datastore
// whose credentials the node used, and, for a second run of the same job, that every object
// came from the node's cache. The Inputs table names the input's type and URI, not its JSON. The
// Data page says where each data asset's bytes live: the store's URI for one registered where it
// is, the workspace's blob store for an upload.
func TestStudioRunShowsObjectStoreData(t *testing.T) {
	ctx := browser(t)
	st := objtest.S3(t)
	w := newWS(t)
	dir := t.TempDir()
	bkt := st.NewContainer(t)
	objtest.PutBytes(t, st, bkt, "in/a.txt", []byte("alpha\n"))
	writeFiles(t, dir, map[string]string{
		"ds.yml": storeDatastoreYAML(t, st, "lake", bkt, "", st.Credentials()),
		"job.yml": "command: cp ${{inputs.d}}/a.txt ${{outputs.o}}/\n" +
			"inputs:\n  d: {type: uri_folder, path: 'azureml://datastores/lake/paths/in/'}\n" +
			"outputs:\n  o: {type: uri_folder, path: 'azureml://datastores/lake/paths/out/${{name}}/'}\n",
	})
	w.ok("datastore", "create", "-f", filepath.Join(dir, "ds.yml"))
	w.waitEnded(w.create(filepath.Join(dir, "job.yml")), job.Completed)
	name := w.create(filepath.Join(dir, "job.yml"))
	w.waitEnded(name, job.Completed)
	if got := string(st.Get(t, bkt, "out/"+name+"/a.txt")); got != "alpha\n" {
		t.Fatalf("the output in the store holds %q", got)
	}

	link := strings.TrimSpace(w.ok("studio").stdout)
	base, _, _ := strings.Cut(link, "#login=")
	p := page{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	p.open(strings.TrimPrefix(link, base))
	p.wait("the jobs list", `!!document.querySelector('#jobs')`)
	p.open("#/jobs/" + name)
	in, out := `document.querySelector('#object-data tr[data-data="input:d"]')`, `document.querySelector('#object-data tr[data-data="output:o"]')`
	for _, c := range []struct{ what, expr string }{
		{"the input's URI", in + `?.querySelector('.uri').textContent === ` + jsString("s3://"+bkt+"/in")},
		{"the input's datastore", in + `.querySelector('.datastore').textContent === 'lake'`},
		{"the input read from the node's cache", in + `.querySelector('.moved').textContent.includes("all from the node's cache")`},
		{"the output's URI", out + `?.querySelector('.uri').textContent === ` + jsString("s3://"+bkt+"/out/"+name)},
		{"the output written", out + `.querySelector('.moved').textContent.startsWith('1 objects')`},
		{"the Inputs table's line", `[...document.querySelectorAll('table.kv tr')].some((r) => r.textContent === 'duri_folder ' + ` + jsString("s3://"+bkt+"/in") + ` + ' (ro_mount)')`},
	} {
		p.wait(c.what, c.expr)
	}
	p.shot("object-data")

	w.ok("data", "create", "-n", "lakein", "-p", "azureml://datastores/lake/paths/in/")
	writeFiles(t, dir, map[string]string{"local/rows.csv": "1\n2\n"})
	w.ok("data", "create", "-n", "uploaded", "-p", filepath.Join(dir, "local"))
	p.open("#/data")
	row := func(name string) string {
		return `document.querySelector('#data-assets tr[data-asset="` + name + `"] .where')`
	}
	p.wait("the store asset's place", row("lakein")+`?.textContent === `+jsString("s3://"+bkt+"/in (datastore lake, read where it is)"))
	p.wait("the upload's place", row("uploaded")+`?.textContent.startsWith('workspaceblobstore (1 files')`)
	p.open("#/data/lakein")
	p.wait("the version's row", `document.querySelector('#data-versions tr[data-version="1"] .where .uri')?.textContent === `+jsString("s3://"+bkt+"/in"))
	p.shot("data")
}
