package e2e

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
)

// Jobs on a Slurm target and on a Kubernetes target read and write object stores from their own
// node, as on the other targets (objectflow_test.go): what they wrote is read back with the
// store's SDK, job show says what the node moved, and the server's byte counters grow by far
// less than the data.

// checkMoved checks job show's data of a lake's copyJob run d: its input fetched whole over the
// network (nothing from the node's cache), its output written whole (the input's objects and
// done.txt).
func (l *lake) checkMoved(t *testing.T, d api.RunDetail) {
	t.Helper()
	in, out := runData(t, d, "input", "data"), runData(t, d, "output", "out")
	want := api.DataMoved{Objects: int64(len(l.in)), Bytes: int64(l.size)}
	if in.Datastore != l.name || in.Moved == nil || *in.Moved != want {
		t.Errorf("%s: job show's input: %+v (moved %+v), want %+v", l.name, in, in.Moved, want)
	}
	if out.Datastore != l.name || out.Moved == nil || out.Moved.Objects != int64(len(l.in))+1 || out.Moved.Bytes != int64(l.size)+int64(len("copied\n")) {
		t.Errorf("%s: job show's output: %+v (moved %+v), want %d objects, %d bytes", l.name, out, out.Moved, len(l.in)+1, l.size+len("copied\n"))
	}
}

// A two-node job on the Slurm test cluster: the batch step's supervisor, on the allocation's
// first node, downloads the input into the run's folder on the shared filesystem before the
// command starts; the command's srun reads it on both nodes, each writing into an output
// folder there, and the supervisor uploads every output once the command completed. S3
// (versitygw) and GCS (fake-gcs-server), each a job of its own, at once. Then a job reads and
// writes the S3 bucket through a datastore without credentials: the batch job's environment is
// what sbatch exported (the server's, here holding an AWS key pair), and the node's cache, on
// the shared filesystem, holds every object of the input already.
func TestObjectStoresOnSlurm(t *testing.T) {
	t.Parallel()
	conf := slurmConf(t)
	s3 := objtest.S3(t)
	stores := []objtest.Store{s3, objtest.GCS(t)}
	w := newWSEnv(t, []string{"AWS_ACCESS_KEY_ID=" + s3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s3.SecretKey}, "--stale-after", "2s")
	t.Cleanup(func() { cancelSlurmJobs(conf, w.home) })
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"hpc.yml": slurmYAML("hpc", conf, "partition: debug\nmax_nodes: 2\n")})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "hpc.yml"))

	var lakes []*lake
	names := map[*lake]string{}
	size := 0
	for _, st := range stores {
		lakes = append(lakes, newLake(t, w, st, dir))
	}
	before := w.serverBytes()
	for _, l := range lakes {
		names[l] = w.create(writeSlurmCopy(t, dir, l, l.name))
		size += l.size
	}
	for _, l := range lakes {
		w.run("job", "stream", "-n", names[l])
	}
	checkNotThroughServer(t, before, w.serverBytes(), size)
	for _, l := range lakes {
		d := w.show(names[l])
		if d.Status != job.Completed {
			t.Fatalf("the two-node copy on %s: %s (%s)\n%s", l.name, d.Status, d.StatusReason, w.logs(names[l]))
		}
		l.checkMoved(t, d)
		l.checkSlurmCopy(t, d)
	}

	l := lakes[0]
	writeFiles(t, dir, map[string]string{"ambient.yml": fmt.Sprintf("name: ambient_s3\ntype: s3\nbucket: %s\nendpoint_url: %s\nregion: %s\n", l.bucket, s3.URL, s3.Region)})
	w.ok("datastore", "create", "-f", filepath.Join(dir, "ambient.yml"))
	name := w.create(writeSlurmCopy(t, dir, l, "ambient_s3"))
	d := w.waitEnded(name, job.Completed)
	if in := runData(t, d, "input", "data"); in.Datastore != "ambient_s3" || in.Moved == nil || in.Moved.CachedObjects != int64(len(l.in)) {
		t.Errorf("the input through ambient_s3: %+v (moved %+v), want its %d objects from the cache", in, in.Moved, len(l.in))
	}
	l.checkSlurmCopy(t, d)
}

// writeSlurmCopy writes the file of a two-node job on hpc that copies l's input folder, read
// through datastore ds, to out/<run>/ on it, and whose srun writes, from each node, the md5 of
// the input's part-0.bin as it read it to nodes/<run>/<node>.md5; it returns the file.
func writeSlurmCopy(t *testing.T, dir string, l *lake, ds string) string {
	at := "azureml://datastores/" + ds + "/paths/"
	file := "slurm-" + ds + ".yml"
	writeFiles(t, dir, map[string]string{file: `command: >-
  srun bash -c 'md5sum < ${{inputs.data}}/part-0.bin > ${{outputs.nodes}}/$SLURMD_NODENAME.md5' &&
  cp -r ${{inputs.data}}/. ${{outputs.out}}/ && echo copied > ${{outputs.out}}/done.txt && echo copied
compute: hpc
resources: {instance_count: 2}
inputs:
  data: {type: uri_folder, path: '` + at + `in/', mode: download}
outputs:
  out: {type: uri_folder, path: '` + at + `out/${{name}}/'}
  nodes: {type: uri_folder, path: '` + at + `nodes/${{name}}/'}
`})
	return filepath.Join(dir, file)
}

// checkSlurmCopy reads back what writeSlurmCopy's job d wrote: the copy, and what each node read.
func (l *lake) checkSlurmCopy(t *testing.T, d api.RunDetail) {
	t.Helper()
	if m := runData(t, d, "output", "nodes").Moved; m == nil || m.Objects != 2 {
		t.Errorf("%s: job show's output nodes: %+v, want the 2 nodes' files", l.name, m)
	}
	l.checkCopied(t, "out/"+d.ID+"/", "copied\n")
	sum := md5.Sum(l.in["part-0.bin"])
	prefix := "nodes/" + d.ID + "/"
	if got, want := l.st.Keys(t, l.bucket, prefix), []string{prefix + "hangar-n1.md5", prefix + "hangar-n2.md5"}; !slices.Equal(got, want) {
		t.Fatalf("%s holds under %s %q, want %q (what each node read)", l.name, prefix, got, want)
	}
	for _, node := range []string{"hangar-n1", "hangar-n2"} {
		if got := string(l.st.Get(t, l.bucket, prefix+node+".md5")); got != hex.EncodeToString(sum[:])+"  -\n" {
			t.Errorf("%s: %s read the input's part-0.bin as %q", l.name, node, got)
		}
	}
}

// A Kubernetes target whose pods are off the host network: the server and the stores listen on
// the pod network's gateway, the only address of this machine a pod reaches. The run's pod
// downloads the input from S3 (versitygw) and Azure Blob (Azurite) and uploads its output there;
// on a two-node job each pod does (kubeTwoNodes).
func TestObjectStoresOnKubernetes(t *testing.T) {
	t.Parallel()
	kc := kubetest.Config(t)
	requirePodGateway(t)
	bin := backendtest.StaticBinary(t)
	stores := []objtest.Store{objtest.S3At(t, podGateway), objtest.AzureAt(t, podGateway)}
	l, err := net.Listen("tcp", net.JoinHostPort(podGateway, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	w := newWS(t, "--listen", addr, "--insecure-no-tls", "--stale-after", "2s")
	w.kubeCleanup(kc)
	dir := t.TempDir()
	target := strings.Replace(kubeYAML("kube", kc, bin, ""), "host_network: true", "host_network: false", 1)
	writeFiles(t, dir, map[string]string{"kube.yml": target})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "kube.yml"))

	var lakes []*lake
	for _, st := range stores {
		lakes = append(lakes, newLake(t, w, st, dir))
	}
	before, size := w.serverBytes(), 0
	names := map[*lake]string{}
	for _, l := range lakes {
		file := filepath.Join(dir, "kube-"+l.name+".yml")
		writeFiles(t, dir, map[string]string{filepath.Base(file): l.copyJob("kube")})
		names[l] = w.create(file)
		size += l.size
	}
	for _, l := range lakes {
		w.run("job", "stream", "-n", names[l])
	}
	after := w.serverBytes()
	for _, l := range lakes {
		d := w.show(names[l])
		if d.Status != job.Completed || d.Compute != "kube" {
			t.Fatalf("the copy on %s: %s on %s (%s)\n%s", l.name, d.Status, d.Compute, d.StatusReason, w.logs(names[l]))
		}
		l.checkMoved(t, d)
		l.checkCopied(t, "out/"+names[l]+"/", "copied\n")
	}
	checkNotThroughServer(t, before, after, size)
	kubeTwoNodes(t, w, dir, lakes[0])
}

// kubeTwoNodes runs a two-node job on kube reading and writing l: every pod of the Indexed Job
// downloads the input into its own run folder and uploads its own output folders, so the
// store holds the copy and both pods' files.
func kubeTwoNodes(t *testing.T, w *ws, dir string, l *lake) {
	t.Helper()
	at := "azureml://datastores/" + l.name + "/paths/"
	writeFiles(t, dir, map[string]string{"two.yml": `command: >-
  cp -r ${{inputs.data}}/. ${{outputs.out}}/ && echo copied > ${{outputs.out}}/done.txt &&
  md5sum < ${{inputs.data}}/part-0.bin > ${{outputs.nodes}}/node-$JOB_COMPLETION_INDEX.md5
compute: kube
resources: {instance_count: 2}
inputs:
  data: {type: uri_folder, path: '` + at + `in/', mode: download}
outputs:
  out: {type: uri_folder, path: '` + at + `out/${{name}}/'}
  nodes: {type: uri_folder, path: '` + at + `nodes/${{name}}/'}
`})
	name := w.create(filepath.Join(dir, "two.yml"))
	w.run("job", "stream", "-n", name)
	d := w.show(name)
	if d.Status != job.Completed {
		t.Fatalf("the two-node copy on kube: %s (%s)\n%s", d.Status, d.StatusReason, w.logs(name))
	}
	l.checkCopied(t, "out/"+name+"/", "copied\n")
	sum := md5.Sum(l.in["part-0.bin"])
	prefix := "nodes/" + name + "/"
	if got, want := l.st.Keys(t, l.bucket, prefix), []string{prefix + "node-0.md5", prefix + "node-1.md5"}; !slices.Equal(got, want) {
		t.Fatalf("%s holds under %s %q, want %q (each pod's)", l.name, prefix, got, want)
	}
	for _, node := range []string{"node-0", "node-1"} {
		if got := string(l.st.Get(t, l.bucket, prefix+node+".md5")); got != hex.EncodeToString(sum[:])+"  -\n" {
			t.Errorf("%s: %s read the input's part-0.bin as %q", l.name, node, got)
		}
	}
}
