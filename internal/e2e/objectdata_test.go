package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
)

// storeDatastoreYAML is a datastore file for container of st, as a user writes it (docs/data.md,
// Object stores), with cred as its credentials (none: the node's identity) and endpoint as the
// store's address ("": st's own).
func storeDatastoreYAML(t *testing.T, st objtest.Store, name, container, endpoint string, cred datastore.Credentials) string {
	t.Helper()
	loc := st.Location(container, "")
	if endpoint == "" {
		endpoint = st.Endpoint()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\ntype: %s\n", name, st.Type())
	switch st.Type() {
	case datastore.TypeS3:
		fmt.Fprintf(&b, "bucket: %s\nendpoint_url: %s\nregion: %s\n", container, endpoint, loc.Region)
	case datastore.TypeGCS:
		fmt.Fprintf(&b, "bucket: %s\nendpoint_url: %s\n", container, endpoint)
	default:
		fmt.Fprintf(&b, "account_name: %s\ncontainer_name: %s\nendpoint: %s\n", loc.Account, container, endpoint)
	}
	vals := map[string]string{"access_key_id": cred.AccessKeyID, "secret_access_key": cred.SecretAccessKey,
		"account_key": cred.AccountKey, "sas_token": cred.SASToken, "service_account_json": cred.ServiceAccountJSON}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if vals[k] != "" {
			q, _ := json.Marshal(vals[k]) // a JSON string is a YAML double-quoted scalar
			lines = append(lines, fmt.Sprintf("  %s: %s\n", k, q))
		}
	}
	if len(lines) > 0 {
		b.WriteString("credentials:\n" + strings.Join(lines, ""))
	}
	return b.String()
}

// runData is the entry of job show's object-store data for input or output name.
func runData(t *testing.T, d api.RunDetail, kind, name string) api.RunData {
	t.Helper()
	for _, x := range d.Data {
		if x.Kind == kind && x.Name == name {
			return x
		}
	}
	t.Fatalf("job %s shows no object-store %s %s: %+v", d.ID, kind, name, d.Data)
	return api.RunData{}
}

// waitEnded waits for a job's end and fails the test unless it is want.
func (w *ws) waitEnded(name string, want job.State) api.RunDetail {
	w.t.Helper()
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != want {
		w.t.Fatalf("job %s ended %s (%s), want %s:\n%s", name, d.Status, d.StatusReason, want, w.logs(name))
	}
	return d
}

// A command job on the local target reads a folder from each object store and writes a folder
// to it, as a user does (datastore create, then a job file naming its paths): the output is in
// the store, read back with the store's own SDK; job show says where it went and what the node
// fetched; a second run of the job reads the input from the node's cache; a direct URI of the
// same bucket takes the datastore's credentials.
func TestObjectStoreJobs(t *testing.T) {
	stores := objtest.All(t)
	w := newWS(t)
	dir := t.TempDir()
	for _, st := range stores {
		checkStoreJob(t, w, dir, st)
	}
}

func checkStoreJob(t *testing.T, w *ws, dir string, st objtest.Store) {
	typ := st.Type()
	ctr := st.NewContainer(t)
	objtest.PutBytes(t, st, ctr, "in/a.txt", []byte("alpha\n"))
	objtest.PutBytes(t, st, ctr, "in/sub/b.txt", []byte("beta\n"))
	ds := "ok_" + typ
	jobYAML := "command: >-\n  cat ${{inputs.d}}/a.txt ${{inputs.d}}/sub/b.txt && mkdir -p ${{outputs.o}}/deep &&\n" +
		"  cat ${{inputs.d}}/a.txt ${{inputs.d}}/sub/b.txt > ${{outputs.o}}/deep/ab.txt && echo gamma > ${{outputs.o}}/c.txt\n" +
		"inputs:\n  d: {type: uri_folder, path: 'azureml://datastores/" + ds + "/paths/in/'}\n" +
		"outputs:\n  o: {type: uri_folder, path: 'azureml://datastores/" + ds + "/paths/out/${{name}}/'}\n"
	writeFiles(t, dir, map[string]string{
		ds + ".yml":          storeDatastoreYAML(t, st, ds, ctr, "", st.Credentials()),
		"job-" + ds + ".yml": jobYAML,
	})
	w.ok("datastore", "create", "-f", filepath.Join(dir, ds+".yml"))

	name := w.create(filepath.Join(dir, "job-"+ds+".yml"))
	d := w.waitEnded(name, job.Completed)
	if logs := w.logs(name); !strings.Contains(logs, "alpha\nbeta") {
		t.Errorf("%s: the job read:\n%s", typ, logs)
	}
	prefix := "out/" + name + "/"
	if got, want := st.Keys(t, ctr, prefix), []string{prefix + "c.txt", prefix + "deep/ab.txt"}; !slices.Equal(got, want) {
		t.Errorf("%s: the store holds %q under %s, want %q", typ, got, prefix, want)
	}
	if got := string(st.Get(t, ctr, prefix+"deep/ab.txt")); got != "alpha\nbeta\n" {
		t.Errorf("%s: %sdeep/ab.txt = %q", typ, prefix, got)
	}
	in, out := runData(t, d, "input", "d"), runData(t, d, "output", "o")
	if m := in.Moved; in.Datastore != ds || m == nil || m.Objects != 2 || m.Bytes != 11 || m.CachedObjects != 0 {
		t.Errorf("%s: job show's input: %+v (moved %+v), want 2 objects, 11 bytes, none from the cache", typ, in, in.Moved)
	}
	if want := st.Location(ctr, strings.TrimSuffix(prefix, "/")).URI(); out.URI != want || out.Moved == nil || out.Moved.Objects != 2 {
		t.Errorf("%s: job show's output: %+v (moved %+v), want %s, 2 objects", typ, out, out.Moved, want)
	}
	if len(d.Outputs) != 0 {
		t.Errorf("%s: the output is in the workspace too: %v", typ, d.Outputs)
	}
	if r := w.run("job", "download", name, "--output-name", "o", "-p", t.TempDir()); r.code == 0 || !strings.Contains(r.stderr, "wrote output o to an object store, not to the workspace: "+out.URI) {
		t.Errorf("%s: job download of the output: exit %d, stderr %q", typ, r.code, r.stderr)
	}
	text := w.ok("job", "show", name).stdout
	if !strings.Contains(text, "Object-store data:") || !strings.Contains(text, "output o: "+out.URI+" (datastore "+ds+", rw_mount): 2 objects") {
		t.Errorf("%s: job show:\n%s", typ, text)
	}

	// Again: every object from the node's cache.
	again := w.waitEnded(w.create(filepath.Join(dir, "job-"+ds+".yml")), job.Completed)
	if m := runData(t, again, "input", "d").Moved; m == nil || m.Objects != 2 || m.CachedObjects != 2 || m.CachedBytes != 11 {
		t.Errorf("%s: the re-run's input: %+v, want its 2 objects (11 bytes) from the node's cache", typ, m)
	}
	if typ != datastore.TypeS3 {
		return
	}
	// A direct URI of the bucket: the datastore's credentials and endpoint, the same cache.
	writeFiles(t, dir, map[string]string{"direct.yml": "command: cat ${{inputs.d}}/a.txt\ninputs:\n  d: {type: uri_folder, mode: download, path: 's3://" + ctr + "/in/'}\n"})
	direct := w.waitEnded(w.create(filepath.Join(dir, "direct.yml")), job.Completed)
	if in := runData(t, direct, "input", "d"); in.Datastore != ds || in.Moved == nil || in.Moved.CachedObjects != 2 {
		t.Errorf("direct s3:// input: %+v (moved %+v), want datastore %s's, from the cache", in, in.Moved, ds)
	}
	// mode: direct passes the store's URI to the command; a uri_file output is the one object.
	writeFiles(t, dir, map[string]string{"uri.yml": "command: echo ${{inputs.raw}} > ${{outputs.f}}\n" +
		"inputs:\n  raw: {type: uri_folder, mode: direct, path: 'azureml://datastores/" + ds + "/paths/in/'}\n" +
		"outputs:\n  f: {type: uri_file, path: 'azureml://datastores/" + ds + "/paths/files/${{name}}/uri.txt'}\n"})
	name = w.create(filepath.Join(dir, "uri.yml"))
	d = w.waitEnded(name, job.Completed)
	if got, want := string(st.Get(t, ctr, "files/"+name+"/uri.txt")), "s3://"+ctr+"/in\n"; got != want {
		t.Errorf("the uri_file output holds %q, want %q (the direct input's URI)", got, want)
	}
	if f := runData(t, d, "output", "f"); f.URI != "s3://"+ctr+"/files/"+name+"/uri.txt" || f.Moved == nil || f.Moved.Objects != 1 {
		t.Errorf("job show's uri_file output: %+v (moved %+v)", f, f.Moved)
	}
}

// Bad credentials and a missing bucket fail the run with a reason that names the datastore and
// path and never the credentials; an output the store refuses fails the run and nothing of it
// is reported; a command that fails writes nothing to the store.
func TestObjectStoreJobFailures(t *testing.T) {
	s3, az := objtest.S3(t), objtest.Azure(t)
	w := newWS(t)
	dir := t.TempDir()
	bkt, ctr := s3.NewContainer(t), az.NewContainer(t)
	objtest.PutBytes(t, s3, bkt, "in/a.txt", []byte("alpha\n"))
	objtest.PutBytes(t, az, ctr, "in/a.txt", []byte("alpha\n"))
	badS3, badAz := s3.BadCredentials(t), az.BadCredentials(t)
	writeFiles(t, dir, map[string]string{
		"ok.yml":       storeDatastoreYAML(t, s3, "ok_s3", bkt, "", s3.Credentials()),
		"bad.yml":      storeDatastoreYAML(t, s3, "bad_s3", bkt, "", badS3),
		"badaz.yml":    storeDatastoreYAML(t, az, "bad_az", ctr, "", badAz),
		"nobucket.yml": storeDatastoreYAML(t, s3, "nobucket_s3", "no-such-bucket-"+strings.ToLower(rand.Text()[:8]), "", s3.Credentials()),
		"read.yml":     "command: cat ${{inputs.d}}/a.txt\ninputs:\n  d: {type: uri_folder, path: 'azureml://datastores/${DS}/paths/in/'}\n",
		"write.yml": "command: echo x > ${{outputs.o}}/x.txt\n" +
			"outputs:\n  o: {type: uri_folder, path: 'azureml://datastores/bad_s3/paths/out/${{name}}'}\n",
		"fail.yml": "command: echo x > ${{outputs.o}}/x.txt && exit 3\n" +
			"outputs:\n  o: {type: uri_folder, path: 'azureml://datastores/ok_s3/paths/failed/${{name}}'}\n",
	})
	for _, f := range []string{"ok.yml", "bad.yml", "badaz.yml", "nobucket.yml"} {
		w.ok("datastore", "create", "-f", filepath.Join(dir, f))
	}
	secrets := []string{badS3.SecretAccessKey, badAz.SASToken, s3.Credentials().SecretAccessKey}
	reads := func(ds string) string {
		f := filepath.Join(dir, "read-"+ds+".yml")
		writeFiles(t, dir, map[string]string{"read-" + ds + ".yml": strings.ReplaceAll(readFile(t, filepath.Join(dir, "read.yml")), "${DS}", ds)})
		return f
	}
	for _, c := range []struct{ ds, at, kind string }{
		{"bad_s3", "datastore bad_s3 path in (s3://" + bkt + "/in)", "access denied"},
		{"bad_az", "datastore bad_az path in (wasbs://" + ctr + "@", "access denied"},
		{"nobucket_s3", "datastore nobucket_s3 path in (s3://no-such-bucket-", "no such bucket or container"},
	} {
		name := w.create(reads(c.ds))
		d := w.waitEnded(name, job.Failed)
		for _, want := range []string{"preparing: input d: ", c.at, c.kind} {
			if !strings.Contains(d.StatusReason, want) {
				t.Errorf("reading %s: reason %q, want it to say %q", c.ds, d.StatusReason, want)
			}
		}
		checkNoSecrets(t, w, name, secrets)
	}

	name := w.create(filepath.Join(dir, "write.yml"))
	d := w.waitEnded(name, job.Failed)
	if want := "finalizing: output o: upload datastore bad_s3 path out/" + name; !strings.Contains(d.StatusReason, want) {
		t.Errorf("an output the store refuses: reason %q, want %q", d.StatusReason, want)
	}
	if keys := s3.Keys(t, bkt, "out/"); len(keys) != 0 || len(d.Outputs) != 0 || runData(t, d, "output", "o").Moved != nil {
		t.Errorf("a refused output left %q in the store, outputs %v, %+v", keys, d.Outputs, d.Data)
	}
	checkNoSecrets(t, w, name, secrets)

	name = w.create(filepath.Join(dir, "fail.yml"))
	d = w.waitEnded(name, job.Failed)
	if keys := s3.Keys(t, bkt, "failed/"); len(keys) != 0 {
		t.Errorf("a failed command's output was uploaded: %q", keys)
	}
	if want := "output o was not written to datastore ok_s3 path failed/" + name; !slices.ContainsFunc(d.Warnings, func(s string) bool { return strings.Contains(s, want) }) {
		t.Errorf("warnings %q, want one saying %q", d.Warnings, want)
	}
}

// checkNoSecrets fails when a credential shows in what a user sees of the run: job show (text and
// JSON) and its logs.
func checkNoSecrets(t *testing.T, w *ws, name string, secrets []string) {
	t.Helper()
	seen := w.ok("job", "show", name).stdout + w.ok("job", "show", name, "-o", "json").stdout + w.logs(name)
	for _, s := range secrets {
		if s != "" && strings.Contains(seen, s) {
			t.Errorf("job %s shows a credential", name)
		}
	}
}

// A connection cut in the middle of an input's download is taken up again where it stopped: the
// job completes with the whole file.
func TestObjectStoreDownloadResumes(t *testing.T) {
	s3 := objtest.S3(t)
	u, err := url.Parse(s3.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	proxy := objtest.NewProxy(t, u.Host)
	w := newWS(t)
	dir := t.TempDir()
	bkt := s3.NewContainer(t)
	data := make([]byte, 8<<20)
	rand.Read(data)
	sum := sha256.Sum256(data)
	objtest.PutBytes(t, s3, bkt, "big/blob.bin", data)
	writeFiles(t, dir, map[string]string{
		"cut.yml": storeDatastoreYAML(t, s3, "cut_s3", bkt, proxy.Rewrite(s3.Endpoint()), s3.Credentials()),
		"job.yml": "command: sha256sum ${{inputs.f}}\ninputs:\n  f: {type: uri_file, path: 'azureml://datastores/cut_s3/paths/big/blob.bin'}\n",
	})
	w.ok("datastore", "create", "-f", filepath.Join(dir, "cut.yml"))
	proxy.CutAfter(1 << 20)
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitEnded(name, job.Completed)
	if !proxy.Cut() {
		t.Fatalf("the proxy never cut the download (%d bytes relayed)", proxy.Sent())
	}
	if logs := w.logs(name); !strings.Contains(logs, hex.EncodeToString(sum[:])) {
		t.Errorf("the file read after the cut differs:\n%s", logs)
	}
	if m := runData(t, d, "input", "f").Moved; m == nil || m.Objects != 1 || m.Bytes != int64(len(data)) {
		t.Errorf("job show's input after the cut: %+v", m)
	}
}
