package e2e

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
)

// Jobs on every kind of node read and write object stores directly (docs/data.md): the node
// downloads a folder input from the store (versitygw's S3, Azurite's blob service,
// fake-gcs-server) and uploads a folder output there, and the server's byte counters
// (hangar_http_received_bytes_total, hangar_http_sent_bytes_total) show that none of the objects
// passed through it. What the job wrote is read back with the store's own SDK.

// lake is an object-store datastore of a workspace, on a bucket (or container) of its own,
// holding a folder "in/" of a few MB of random files.
type lake struct {
	name   string // the datastore's
	st     objtest.Store
	bucket string
	in     map[string][]byte // key under in/ → content
	size   int               // bytes under in/
}

// newLake makes a bucket on st, puts the input folder there with the store's SDK, and creates
// the datastore "lake_<type>" on it in w.
func newLake(t *testing.T, w *ws, st objtest.Store, dir string) *lake {
	t.Helper()
	l := &lake{name: "lake_" + st.Type(), st: st, bucket: st.NewContainer(t), in: map[string][]byte{}}
	for i, n := range []int{1 << 20, 768 << 10, 256 << 10} {
		b := make([]byte, n)
		rand.Read(b)
		key := fmt.Sprintf("part-%d.bin", i)
		if i == 2 {
			key = "sub/" + key // a folder inside the folder
		}
		objtest.PutBytes(t, st, l.bucket, "in/"+key, b)
		l.in[key], l.size = b, l.size+n
	}
	file := l.name + ".yml"
	writeFiles(t, dir, map[string]string{file: datastoreYAML(l.name, st, l.bucket)})
	w.ok("datastore", "create", "-f", filepath.Join(dir, file))
	return l
}

// datastoreYAML is the datastore file of container on st, with the credentials it takes.
func datastoreYAML(name string, st objtest.Store, container string) string {
	switch s := st.(type) {
	case *objtest.S3Server:
		return fmt.Sprintf("name: %s\ntype: s3\nbucket: %s\nendpoint_url: %s\nregion: %s\n"+
			"credentials:\n  access_key_id: %s\n  secret_access_key: %s\n", name, container, s.URL, s.Region, s.AccessKey, s.SecretKey)
	case *objtest.AzureServer:
		return fmt.Sprintf("name: %s\ntype: azure_blob\naccount_name: %s\ncontainer_name: %s\nendpoint: %s\n"+
			"credentials:\n  account_key: %s\n", name, objtest.AzuriteAccount, container, s.URL, objtest.AzuriteKey)
	default: // fake-gcs-server takes unauthenticated requests: the datastore has no credentials
		return fmt.Sprintf("name: %s\ntype: gcs\nbucket: %s\nendpoint_url: %s\n", name, container, st.Endpoint())
	}
}

// copyJob is a job on compute that copies the lake's input folder into its output folder on the
// lake, at out/<run>/, and adds done.txt.
func (l *lake) copyJob(compute string) string {
	at := "azureml://datastores/" + l.name + "/paths/"
	return `command: cp -r ${{inputs.data}}/. ${{outputs.out}}/ && echo copied > ${{outputs.out}}/done.txt && echo copied
compute: ` + compute + `
inputs:
  data: {type: uri_folder, path: '` + at + `in/', mode: download}
outputs:
  out: {type: uri_folder, path: '` + at + `out/${{name}}/'}
`
}

// checkCopied reads back with the store's SDK what was written at prefix: the input's files,
// byte for byte, and done.txt holding done.
func (l *lake) checkCopied(t *testing.T, prefix, done string) {
	t.Helper()
	want := []string{prefix + "done.txt"}
	for k := range l.in {
		want = append(want, prefix+k)
	}
	slices.Sort(want)
	if got := l.st.Keys(t, l.bucket, prefix); !slices.Equal(got, want) {
		t.Fatalf("%s holds under %s:\n%v\nwant:\n%v", l.name, prefix, got, want)
	}
	for k, b := range l.in {
		if got := l.st.Get(t, l.bucket, prefix+k); !bytes.Equal(got, b) {
			t.Errorf("%s: %s%s: %d bytes differ from the input's %d", l.name, prefix, k, len(got), len(b))
		}
	}
	if got := string(l.st.Get(t, l.bucket, prefix+"done.txt")); got != done {
		t.Errorf("%s: %sdone.txt = %q", l.name, prefix, got)
	}
}

// copyOnEveryStore runs a copyJob on compute for a lake on each store at once, and checks that each completed, wrote its copy, and that the server's byte counters
// grew by far less than the data moved.
func copyOnEveryStore(t *testing.T, w *ws, dir, compute string, stores []objtest.Store) {
	t.Helper()
	var lakes []*lake
	for _, st := range stores {
		lakes = append(lakes, newLake(t, w, st, dir))
	}
	before, size := w.serverBytes(), 0
	names := map[*lake]string{}
	for _, l := range lakes {
		file := filepath.Join(dir, "copy-"+l.name+".yml")
		writeFiles(t, dir, map[string]string{filepath.Base(file): l.copyJob(compute)})
		names[l] = w.create(file)
		size += l.size
	}
	// Streamed, not polled: the test's own reads stay small beside the data.
	for _, l := range lakes {
		w.run("job", "stream", "-n", names[l])
	}
	after := w.serverBytes()
	for _, l := range lakes {
		d := w.show(names[l])
		if d.Status != job.Completed || d.Compute != strings.TrimPrefix(compute, "azureml:") {
			t.Fatalf("the copy on %s: %s on %s (%s)", l.name, d.Status, d.Compute, d.StatusReason)
		}
	}
	checkNotThroughServer(t, before, after, size)
	for _, l := range lakes {
		l.checkCopied(t, "out/"+names[l]+"/", "copied\n")
	}
}

// serverBytes is how many body bytes the server has received and sent, every route but
// /metrics itself, from its Prometheus counters.
func (w *ws) serverBytes() int64 {
	w.t.Helper()
	h := home.Home{Dir: w.home}
	si, err := h.ReadServerInfo()
	if err != nil {
		w.t.Fatal(err)
	}
	tok, err := h.ReadToken()
	if err != nil {
		w.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, si.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		w.t.Fatalf("parse /metrics: %v", err)
	}
	var n float64
	for _, name := range []string{"hangar_http_received_bytes_total", "hangar_http_sent_bytes_total"} {
		for _, m := range fams[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() != "GET /metrics" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int64(n)
}

// checkNotThroughServer fails when the server's counters grew by more than a small part of the
// data moved (data bytes read plus as many written): the objects went around it.
func checkNotThroughServer(t *testing.T, before, after int64, data int) {
	t.Helper()
	grew := after - before
	t.Logf("the server received and sent %d bytes while the jobs moved %d bytes of objects", grew, 2*data)
	if grew > int64(data)/8 {
		t.Errorf("the server's byte counters grew by %d bytes, the job's data is %d bytes each way: the objects passed through the server", grew, data)
	}
}

// An attached VM (sshd in its own network namespace) whose node reaches the stores on this
// machine's address on its link: its jobs read and write each store from there.
func TestObjectStoresOnAttachedVM(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{NetNS: true})
	stores := []objtest.Store{objtest.S3At(t, srv.Gateway), objtest.AzureAt(t, srv.Gateway), objtest.GCSAt(t, srv.Gateway)}
	w := newWS(t)
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	writeFiles(t, dir, map[string]string{"vm.yml": vmYAML("vm1", srv, srv.KeyFile, work)})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	copyOnEveryStore(t, w, dir, "vm1", stores)
}

// A managed cluster of local agents: its node reads and writes each store.
func TestObjectStoresOnManagedCluster(t *testing.T) {
	stores := objtest.All(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"cluster.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\nidle_time_before_scale_down: 60\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	copyOnEveryStore(t, w, dir, "azureml:pool", stores)
}

// A pipeline whose steps pass data through an S3 datastore: the first step writes its output
// there and the second reads it from there (its input is the first's place in the bucket); the
// second's own output (no path: the pipeline's default_datastore) lands in the bucket at Azure's
// default place.
func TestPipelineThroughObjectStore(t *testing.T) {
	s3 := objtest.S3(t)
	w := newWS(t)
	dir := t.TempDir()
	l := newLake(t, w, s3, dir)
	writeFiles(t, dir, map[string]string{"pipeline.yml": `type: pipeline
settings: {default_datastore: azureml:lake_s3, default_compute: local}
jobs:
  prep:
    command: cp -r ${{inputs.raw}}/. ${{outputs.data}}/ && echo prepared > ${{outputs.data}}/note.txt
    inputs:
      raw: {type: uri_folder, path: 'azureml://datastores/lake_s3/paths/in/'}
    outputs:
      data: {type: uri_folder, path: 'azureml://datastores/lake_s3/paths/prepared/${{name}}/'}
  train:
    command: cp -r ${{inputs.data}}/. ${{outputs.model}}/ && rm ${{outputs.model}}/note.txt && cat ${{inputs.data}}/note.txt > ${{outputs.model}}/done.txt
    inputs:
      data: ${{parent.jobs.prep.outputs.data}}
    outputs:
      model: {type: uri_folder}
`})
	before := w.serverBytes()
	name := w.create(filepath.Join(dir, "pipeline.yml"))
	w.run("job", "stream", "-n", name) // its steps as they change, until it ends
	after := w.serverBytes()
	if d := w.show(name); d.Status != job.Completed {
		t.Fatalf("pipeline %s: %s (%s)", name, d.Status, d.StatusReason)
	}
	prep, train := name+"_prep", name+"_train"
	in := w.show(train).Spec.Inputs["data"]
	if in.Store == nil || in.Store.Datastore != "lake_s3" || in.Store.Path != "prepared/"+prep || in.Manifest != "" {
		t.Errorf("train's input: %+v (store %+v), want the lake's prepared/%s", in, in.Store, prep)
	}
	// prep read the input and wrote it, train read and wrote it again.
	checkNotThroughServer(t, before, after, 2*l.size)
	if got := string(s3.Get(t, l.bucket, "prepared/"+prep+"/note.txt")); got != "prepared\n" {
		t.Errorf("prep's note.txt in the bucket = %q", got)
	}
	l.checkCopied(t, "azureml/"+train+"/model/", "prepared\n")
}
