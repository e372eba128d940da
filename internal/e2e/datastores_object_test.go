package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
)

// The credentials of the object-store datastores below: none may appear in any output.
var objectDatastoreSecrets = []string{"acct-key-e2e-5b1d", "sv=2024&sig=e2esas77", "sp-secret-e2e-0c4e", "s3-secret-e2e-91fa",
	"AKIDE2E4", "gcs-private-key-e2e-3d2b"}

// Object-store datastores end to end: each kind created from its file with the CLI, listed and
// shown in every format with its location and the kind of its credentials and never a credential;
// the key rotated; the credentials route answering a live run's own token only.
func TestObjectDatastores(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"blob.yml": "$schema: https://azuremlschemas.azureedge.net/latest/azureBlob.schema.json\nname: blob-example\ntype: azure_blob\n" +
			"account_name: devstoreaccount1\ncontainer_name: data\nendpoint: http://127.0.0.1:10000/devstoreaccount1\n" +
			"credentials:\n  account_key: acct-key-e2e-5b1d\n",
		"sas.yml": "name: blob_sas\ntype: azure_blob\naccount_name: mytestblobstore\ncontainer_name: data-container\nprotocol: wasbs\n" +
			"credentials:\n  sas_token: ?sv=2024&sig=e2esas77\n",
		"gen2.yml": "$schema: https://azuremlschemas.azureedge.net/latest/azureDataLakeGen2.schema.json\nname: adls_gen2_example\n" +
			"type: azure_data_lake_gen2\naccount_name: mytestdatalakegen2\nfilesystem: my-gen2-container\n" +
			"credentials:\n  tenant_id: 00000000-0000-0000-0000-000000000001\n  client_id: 00000000-0000-0000-0000-000000000002\n  client_secret: sp-secret-e2e-0c4e\n",
		"credless.yml": "name: blob_credless\ntype: azure_blob\naccount_name: mytestblobstore\ncontainer_name: data-container\n",
		"s3.yml": "name: s3ds\ntype: s3\nbucket: e2e-bucket\nendpoint_url: http://127.0.0.1:7070\nregion: us-east-1\n" +
			"credentials:\n  access_key_id: AKIDE2E4\n  secret_access_key: s3-secret-e2e-91fa\n",
		"gcs.yml":      "name: gcsds\ntype: gcs\nbucket: e2e-bucket\nendpoint_url: http://127.0.0.1:4443\ncredentials:\n  service_account_json: key.json\n",
		"key.json":     `{"type": "service_account", "private_key": "gcs-private-key-e2e-3d2b"}`,
		"onelake.yml":  "name: onelake_example\ntype: one_lake\none_lake_workspace_name: ws\nendpoint: x.dfs.fabric.microsoft.com\n",
		"badcreds.yml": "name: bad\ntype: s3\nbucket: e2e-bucket\ncredentials:\n  account_key: acct-key-e2e-5b1d\n",
		"first.yml":    "command: echo first\n",
		"peek.yml": "command: >-\n" +
			"  echo \"$HANGAR_RUN_TOKEN\" > outputs/token.txt;\n" +
			"  for id in $HANGAR_RUN_ID $OTHER; do echo \"route $id $(curl -s ${MLFLOW_TRACKING_SERVER_CERT_PATH:+--cacert $MLFLOW_TRACKING_SERVER_CERT_PATH} " +
			"-o /dev/null -w '%{http_code}' -H \"Authorization: Bearer $HANGAR_RUN_TOKEN\" $MLFLOW_TRACKING_URI/api/runs/$id/datastore-credentials)\"; done\n",
	})
	file := func(name string) string { return filepath.Join(dir, name) }
	var outputs []string
	keep := func(r result) result { outputs = append(outputs, r.stdout, r.stderr); return r }

	want := map[string]struct{ kind, uri string }{
		"blob-example":      {"account_key", "wasbs://data@devstoreaccount1.blob.core.windows.net/"},
		"blob_sas":          {"sas_token", "wasbs://data-container@mytestblobstore.blob.core.windows.net/"},
		"adls_gen2_example": {"service_principal", "abfss://my-gen2-container@mytestdatalakegen2.dfs.core.windows.net/"},
		"blob_credless":     {"", "wasbs://data-container@mytestblobstore.blob.core.windows.net/"},
		"s3ds":              {"access_key", "s3://e2e-bucket/"},
		"gcsds":             {"service_account", "gs://e2e-bucket/"},
	}
	for _, f := range []string{"blob.yml", "sas.yml", "gen2.yml", "credless.yml", "s3.yml", "gcs.yml"} {
		r := keep(w.ok("datastore", "create", "-f", file(f)))
		if !strings.Contains(r.stdout, "Created datastore ") {
			t.Errorf("datastore create -f %s said:\n%s", f, r.stdout)
		}
	}
	r := keep(w.run("datastore", "create", "-f", file("onelake.yml")))
	if r.code == 0 || !strings.Contains(r.stderr, "onelake.yml: type: type one_lake: ") || !strings.Contains(r.stderr, "local_folder, azure_blob, azure_data_lake_gen2, s3, gcs") {
		t.Errorf("a one_lake datastore: exit %d, stderr %q", r.code, r.stderr)
	}
	r = keep(w.run("datastore", "create", "-f", file("badcreds.yml")))
	if r.code == 0 || !strings.Contains(r.stderr, "badcreds.yml: credentials.account_key: not a credential of a s3 datastore") {
		t.Errorf("Azure's credentials on s3: exit %d, stderr %q", r.code, r.stderr)
	}

	var list []datastore.Datastore
	r = keep(w.ok("datastore", "list", "-o", "json"))
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 7 {
		t.Fatalf("datastore list -o json: %v\n%s", err, r.stdout)
	}
	for _, d := range list[1:] {
		wd, ok := want[d.Name]
		if !ok || d.CredentialKind != wd.kind || d.Locate("").URI() != wd.uri {
			t.Errorf("listed %s: kind %q, at %s; want %+v", d.Name, d.CredentialKind, d.Locate("").URI(), wd)
		}
	}
	table := keep(w.ok("datastore", "list")).stdout
	for name, wd := range want {
		if !strings.Contains(table, name) || !strings.Contains(table, wd.uri) {
			t.Errorf("datastore list does not show %s at %s:\n%s", name, wd.uri, table)
		}
		show := keep(w.ok("datastore", "show", name)).stdout
		if !strings.Contains(show, wd.uri) || (wd.kind != "" && !strings.Contains(show, wd.kind)) {
			t.Errorf("datastore show %s:\n%s", name, show)
		}
		keep(w.ok("datastore", "show", name, "-o", "json"))
		keep(w.ok("datastore", "show", name, "-o", "yaml"))
	}
	if show := keep(w.ok("datastore", "show", "blob_credless")).stdout; !strings.Contains(show, "none: the node's identity") {
		t.Errorf("a datastore without credentials:\n%s", show)
	}

	// The run route: a live run's own token only.
	first := w.create(file("first.yml"))
	if d := w.waitStatus(first, time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("first ended %s", d.Status)
	}
	peek := w.create(file("peek.yml"), "--set", "environment_variables.OTHER="+first)
	if d := w.waitStatus(peek, time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("peek ended %s:\n%s", d.Status, w.logs(peek))
	}
	logs := w.logs(peek)
	if !strings.Contains(logs, "route "+peek+" 200") || !strings.Contains(logs, "route "+first+" 403") {
		t.Errorf("the run's calls of the credentials route:\n%s", logs)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", peek, "--download-path", out)
	tok := strings.TrimSpace(readFile(t, filepath.Join(out, peek, "artifacts", "outputs", "token.txt")))
	admin := w.client()
	for _, c := range []struct{ who, token, run string }{
		{"the finished run's own token", tok, peek},
		{"a finished run's token for another run", tok, first},
		{"the workspace's token", adminToken(t, w), peek},
		{"no token", "", peek},
	} {
		st, body := call(t, admin.HTTPClient(), http.MethodGet, admin.BaseURL()+"/api/runs/"+c.run+"/datastore-credentials", c.token, "")
		outputs = append(outputs, body)
		if st/100 == 2 || st == http.StatusNotFound {
			t.Errorf("%s: %d %s; want a refusal", c.who, st, body)
		}
	}

	// Rotate the key: the datastores' credentials are resealed with the rest.
	rot := keep(w.ok("secret", "rotate-key", "--yes", "-o", "json"))
	var reply api.RotateKeyReply
	if err := json.Unmarshal([]byte(rot.stdout), &reply); err != nil || reply.Resealed < 5 {
		t.Fatalf("rotate-key: %v %s", err, rot.stdout)
	}
	keep(w.ok("datastore", "list", "-o", "yaml"))
	checkObjectDataAssets(t, w, dir)
	keep(w.ok("datastore", "delete", "s3ds", "--yes"))
	if r := w.run("datastore", "show", "s3ds"); r.code == 0 {
		t.Errorf("s3ds shown after its delete:\n%s", r.stdout)
	}

	outputs = append(outputs, readFile(t, filepath.Join(w.home, "test-server.log")))
	for _, o := range outputs {
		for _, s := range objectDatastoreSecrets {
			if strings.Contains(o, s) {
				t.Fatalf("an output holds the credential %q:\n%s", s, o)
			}
		}
	}
}

// checkObjectDataAssets: data assets on an object store are registered where they are (nothing
// uploaded) and data show says where their bytes live; a local folder is still uploaded.
func checkObjectDataAssets(t *testing.T, w *ws, dir string) {
	t.Helper()
	var v dataset.Version
	w.dataJSON(&v, "data", "create", "-n", "images", "-p", "azureml://datastores/s3ds/paths/images/")
	if v.Manifest != "" || v.Location == nil || v.Location.URI() != "s3://e2e-bucket/images" || v.Location.Datastore != "s3ds" {
		t.Errorf("data create on s3ds = %+v (location %v)", v, v.Location)
	}
	show := w.ok("data", "show", "images").stdout
	for _, s := range []string{"Location", "s3://e2e-bucket/images", "Datastore", "s3ds", "read where it is"} {
		if !strings.Contains(show, s) {
			t.Errorf("data show images lacks %q:\n%s", s, show)
		}
	}
	v = dataset.Version{}
	w.dataJSON(&v, "data", "create", "-n", "raw", "-p", "gs://e2e-bucket/raw/")
	if v.Location == nil || v.Location.Datastore != "gcsds" || v.Location.Endpoint != "http://127.0.0.1:4443" {
		t.Errorf("a direct gs:// URI in gcsds's bucket = %+v", v.Location)
	}
	v = dataset.Version{}
	w.dataJSON(&v, "data", "create", "-n", "elsewhere", "-p", "s3://another-bucket/x/")
	if v.Location == nil || v.Location.Datastore != "" {
		t.Errorf("a direct s3:// URI no datastore holds = %+v", v.Location)
	}
	if show := w.ok("data", "show", "elsewhere").stdout; !strings.Contains(show, "the node's own identity") {
		t.Errorf("data show elsewhere:\n%s", show)
	}
	writeFiles(t, dir, map[string]string{"local/a.txt": "alpha\n"})
	v = dataset.Version{}
	w.dataJSON(&v, "data", "create", "-n", "local", "-p", filepath.Join(dir, "local"))
	if v.Manifest == "" || v.Location != nil || !strings.HasPrefix(v.Path, "azureml://datastores/workspaceblobstore/paths/LocalUpload/") {
		t.Errorf("a local folder = %+v", v)
	}
}
