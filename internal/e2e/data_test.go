package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
)

// dataJSON runs a data or datastore command with -o json and decodes its answer.
func (w *ws) dataJSON(out any, args ...string) {
	w.t.Helper()
	r := w.ok(append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(r.stdout), out); err != nil {
		w.t.Fatalf("hangar %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
}

// runLogs runs a job file to completion and returns its log.
func (w *ws) runLogs(file string) string {
	w.t.Helper()
	name := w.create(file)
	if d := w.waitStatus(name, time.Minute, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed {
		w.t.Fatalf("job %s (%s) ended %s:\n%s", name, filepath.Base(file), d.Status, w.logs(name))
	}
	return w.logs(name)
}

// Data assets end to end, as a user sees them: a uri_folder from a local folder (Azure's file
// shape), a job reading azureml:iris@latest, a v2 that @latest then picks, an mltable without
// its MLTable refused, archive and restore (a number never reused), list and show, a missing
// asset named in the error, and the registry after a server restart.
func TestDataAssets(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"data/a.txt":            "alpha\n",
		"data/sub/b.txt":        "beta\n",
		"data2/a.txt":           "alpha v2\n",
		"table/titanic.csv":     "a,b\n1,2\n",
		"mltable/MLTable":       "paths:\n  - file: ./titanic.csv\n",
		"mltable/titanic.csv":   "a,b\n1,2\n",
		"data.yml":              "$schema: https://azuremlschemas.azureedge.net/latest/data.schema.json\nname: iris\ndescription: from a folder\ntype: uri_folder\npath: data/\ntags: {team: vision}\n",
		"badtable.yml":          "name: tbl\ntype: mltable\npath: ./table\n",
		"read.yml":              "command: cat ${{inputs.d}}/a.txt ${{inputs.d}}/sub/b.txt\ninputs:\n  d: {type: uri_folder, path: azureml:iris@latest}\n",
		"readlatest.yml":        "command: cat ${{inputs.d}}/a.txt\ninputs:\n  d:\n    type: uri_folder\n    path: azureml:iris@latest\n",
		"readv1.yml":            "command: cat ${{inputs.d}}/a.txt\ninputs:\n  d: {type: uri_folder, path: 'azureml:iris:1'}\n",
		"readtable.yml":         "command: ls ${{inputs.t}}\ninputs:\n  t: {type: mltable, path: azureml:titanic@latest}\n",
		"missing.yml":           "command: ls ${{inputs.d}}\ninputs:\n  d: {type: uri_folder, path: azureml:nope@latest}\n",
		"missingversion.yml":    "command: ls ${{inputs.d}}\ninputs:\n  d: {type: uri_file, path: azureml:iris:9}\n",
		"outsidefile/one.csv":   "x\n",
		"outsidefile/other.txt": "unused\n",
	})
	file := func(name string) string { return filepath.Join(dir, name) }

	r := w.ok("data", "create", "-f", file("data.yml"))
	if !strings.Contains(r.stdout, "Created data asset iris version 1 (uri_folder): 2 files") || !strings.Contains(r.stdout, "azureml:iris:1") {
		t.Errorf("data create said:\n%s", r.stdout)
	}
	if got := w.runLogs(file("read.yml")); !strings.Contains(got, "alpha\nbeta") {
		t.Errorf("job reading iris@latest saw:\n%s", got)
	}

	// A second version from flags; @latest moves to it, :1 still names the first.
	w.ok("data", "create", "--name", "iris", "--path", file("data2"), "--description", "v2")
	if got := w.runLogs(file("readlatest.yml")); !strings.Contains(got, "alpha v2") {
		t.Errorf("job reading iris@latest after v2 saw:\n%s", got)
	}
	if got := w.runLogs(file("readv1.yml")); !strings.Contains(got, "alpha") || strings.Contains(got, "v2") {
		t.Errorf("job reading iris:1 saw:\n%s", got)
	}

	// mltable: the folder must hold its MLTable file, said with the file and field.
	if r := w.run("data", "create", "-f", file("badtable.yml")); r.code == 0 ||
		!strings.Contains(r.stderr, "badtable.yml: path: type mltable: ./table has no MLTable file") {
		t.Errorf("mltable without MLTable (-f): exit %d, stderr %q", r.code, r.stderr)
	}
	if r := w.run("data", "create", "-n", "tbl", "--type", "mltable", "-p", file("table")); r.code == 0 || !strings.Contains(r.stderr, "has no MLTable file") {
		t.Errorf("mltable without MLTable (flags): exit %d, stderr %q", r.code, r.stderr)
	}
	w.ok("data", "create", "-n", "titanic", "--type", "mltable", "-p", file("mltable"))
	if got := w.runLogs(file("readtable.yml")); !strings.Contains(got, "MLTable") || !strings.Contains(got, "titanic.csv") {
		t.Errorf("job reading the mltable saw:\n%s", got)
	}

	checkDataArchive(t, w, file("data2"))

	// A missing asset: the job is refused, naming the field and the asset.
	if r := w.run("job", "create", "-f", file("missing.yml")); r.code == 0 || !strings.Contains(r.stderr, "inputs.d.path: no data asset nope@latest") {
		t.Errorf("a job naming a missing data asset: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := w.run("job", "create", "-f", file("missingversion.yml")); r.code == 0 || !strings.Contains(r.stderr, "no data asset iris:9 in this workspace (its latest version is 3)") {
		t.Errorf("a job naming a missing version: exit %d, stderr %q", r.code, r.stderr)
	}

	// The registry is the workspace's: it outlives the server.
	w.killServer()
	w.startServer()
	var v dataset.Version
	w.dataJSON(&v, "data", "show", "iris@latest")
	if v.Version != "3" {
		t.Errorf("after a restart iris@latest = %s, want 3", v.Version)
	}
}

// Datastores end to end: workspaceblobstore always listed; an upload's path and a path inside it
// read by a job; a job output written at a workspaceblobstore path and read by the next job; a
// data asset registered from that path; a local_folder datastore read in place; Azure's file shares refused.
func TestDatastores(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	shared := t.TempDir()
	writeFiles(t, shared, map[string]string{"iris/iris.csv": "sepal,petal\n5.1,1.4\n"})
	writeFiles(t, dir, map[string]string{
		"data/sub/b.txt": "beta\n",
		"write.yml": "command: mkdir -p ${{outputs.o}}/deep && echo written-there > ${{outputs.o}}/deep/x.txt\n" +
			"outputs:\n  o: {type: uri_folder, path: 'azureml://datastores/workspaceblobstore/paths/shared/${{name}}-out/'}\n",
		"shared.yml": "name: shared\ntype: local_folder\npath: " + shared + "\ndescription: nfs\n",
		"files.yml":  "name: file_example\ntype: azure_file\naccount_name: acct\nfile_share_name: c\n",
		"readlocal.yml": "command: cat ${{inputs.d}}/iris.csv\n" +
			"inputs:\n  d: {type: uri_folder, path: 'azureml://datastores/shared/paths/iris/'}\n",
		"readabsent.yml": "command: ls ${{inputs.d}}\ninputs:\n  d: {type: uri_folder, path: 'azureml://datastores/workspaceblobstore/paths/never/written'}\n",
	})
	file := func(name string) string { return filepath.Join(dir, name) }

	var ds []datastore.Datastore
	w.dataJSON(&ds, "datastore", "list")
	if len(ds) != 1 || ds[0].Name != "workspaceblobstore" {
		t.Errorf("datastore list of a new workspace = %+v", ds)
	}

	// An upload is written at LocalUpload/<id>/<name>: a job reads a folder inside it.
	var v dataset.Version
	w.dataJSON(&v, "data", "create", "-n", "up", "-p", file("data"))
	writeFiles(t, dir, map[string]string{"readupload.yml": "command: cat ${{inputs.d}}/b.txt\n" +
		"inputs:\n  d: {type: uri_folder, path: '" + v.Path + "/sub'}\n"})
	if got := w.runLogs(file("readupload.yml")); !strings.Contains(got, "beta") {
		t.Errorf("job reading %s/sub saw:\n%s", v.Path, got)
	}

	// A job's output with a workspaceblobstore path is written there: the next job reads it,
	// and a data asset is registered from it.
	writer := w.create(file("write.yml"))
	if d := w.waitStatus(writer, time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("writer ended %s:\n%s", d.Status, w.logs(writer))
	}
	at := "azureml://datastores/workspaceblobstore/paths/shared/" + writer + "-out"
	writeFiles(t, dir, map[string]string{"readout.yml": "command: cat ${{inputs.d}}/deep/x.txt\n" +
		"inputs:\n  d: {type: uri_folder, path: '" + at + "/'}\n"})
	if got := w.runLogs(file("readout.yml")); !strings.Contains(got, "written-there") {
		t.Errorf("job reading %s saw:\n%s", at, got)
	}
	w.dataJSON(&v, "data", "create", "-n", "fromstore", "--type", "uri_file", "-p", at+"/deep/x.txt")
	if v.Files != 1 || v.Source != at+"/deep/x.txt" {
		t.Errorf("data asset from a datastore path = %+v", v)
	}
	// Azure's default output place names a job's output without any path declared.
	w.dataJSON(&v, "data", "create", "-n", "default-place", "-p", "azureml://datastores/workspaceblobstore/paths/azureml/"+writer+"/o/deep")
	if v.Files != 1 {
		t.Errorf("data asset from azureml/<job>/<output> = %+v", v)
	}
	if r := w.run("job", "create", "-f", file("readabsent.yml")); r.code == 0 || !strings.Contains(r.stderr, "inputs.d.path: nothing was written at azureml://datastores/workspaceblobstore/paths/never/written") {
		t.Errorf("a path never written: exit %d, stderr %q", r.code, r.stderr)
	}

	// A local_folder datastore: read in place on the local target.
	r := w.ok("datastore", "create", "-f", file("shared.yml"))
	if !strings.Contains(r.stdout, "Created datastore shared (local_folder "+shared+"; mounted on local)") {
		t.Errorf("datastore create said:\n%s", r.stdout)
	}
	if got := w.runLogs(file("readlocal.yml")); !strings.Contains(got, "sepal,petal") {
		t.Errorf("job reading the local_folder datastore saw:\n%s", got)
	}
	r = w.ok("datastore", "list")
	if !strings.Contains(r.stdout, "workspaceblobstore") || !strings.Contains(r.stdout, "shared") || !strings.Contains(r.stdout, shared) {
		t.Errorf("datastore list:\n%s", r.stdout)
	}
	r = w.ok("datastore", "show", "shared")
	if !strings.Contains(r.stdout, "local_folder") || !strings.Contains(r.stdout, "azureml://datastores/shared/paths/<path>") {
		t.Errorf("datastore show shared:\n%s", r.stdout)
	}
	if r := w.run("datastore", "create", "-f", file("files.yml")); r.code == 0 || !strings.Contains(r.stderr, "files.yml: type: type azure_file: an Azure file share is an SMB share") {
		t.Errorf("an azure_file datastore: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := w.run("datastore", "show", "nope"); r.code == 0 || !strings.Contains(r.stderr, "no datastore named nope") {
		t.Errorf("datastore show nope: exit %d, stderr %q", r.code, r.stderr)
	}
}

// checkDataArchive: an archived version leaves list and @latest, still resolves by number, and
// its number is never reused; list and show print what a user needs.
func checkDataArchive(t *testing.T, w *ws, data2 string) {
	t.Helper()
	// Archive: out of list and @latest, still usable by number, its number never reused.
	w.ok("data", "archive", "--name", "iris", "--version", "2")
	var v dataset.Version
	w.dataJSON(&v, "data", "show", "iris")
	if v.Version != "1" || v.Description != "from a folder" || v.Tags["team"] != "vision" || v.Files != 2 || v.Source != "local" {
		t.Errorf("iris after archiving 2 = %+v", v)
	}
	w.ok("data", "create", "-n", "iris", "-p", data2)
	w.dataJSON(&v, "data", "show", "iris@latest")
	if v.Version != "3" {
		t.Errorf("the version after an archived 2 = %s, want 3", v.Version)
	}
	var list []dataset.Version
	w.dataJSON(&list, "data", "list", "--name", "iris", "--include-archived")
	if got := dataVersions(list); got != "iris:3 iris:2 iris:1" || !list[1].Archived {
		t.Errorf("data list --name iris --include-archived = %s", got)
	}
	w.ok("data", "restore", "iris", "--version", "2")
	r := w.ok("data", "list")
	if !strings.Contains(r.stdout, "NAME") || !strings.Contains(r.stdout, "iris") || !strings.Contains(r.stdout, "titanic") ||
		strings.Contains(r.stdout, "ARCHIVED") {
		t.Errorf("data list:\n%s", r.stdout)
	}
	r = w.ok("data", "show", "iris:1")
	for _, want := range []string{"uri_folder", "2 files", "azureml://datastores/workspaceblobstore/paths/LocalUpload/", "azureml:iris:1", "team: vision"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("data show iris:1 lacks %q:\n%s", want, r.stdout)
		}
	}
}

func dataVersions(vs []dataset.Version) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name+":"+v.Version)
	}
	return strings.Join(out, " ")
}
