package datastore

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseObjectURI(t *testing.T) {
	blob := func(acct, ctr, p string) Location {
		return Location{Type: TypeAzureBlob, Account: acct, Container: ctr, Path: p, Endpoint: "https://" + acct + ".blob.core.windows.net"}
	}
	tests := []struct {
		in     string
		want   Location
		errHas string
	}{
		{in: "s3://my-bucket/data/train/", want: Location{Type: TypeS3, Container: "my-bucket", Path: "data/train"}},
		{in: "S3://my.bucket", want: Location{Type: TypeS3, Container: "my.bucket"}},
		{in: "s3://bk1/a b/c%20d.csv", want: Location{Type: TypeS3, Container: "bk1", Path: "a b/c%20d.csv"}},
		{in: "gs://gcs_bucket/x.csv", want: Location{Type: TypeGCS, Container: "gcs_bucket", Path: "x.csv"}},
		{in: "wasbs://data@acct1.blob.core.windows.net/raw/iris.csv", want: blob("acct1", "data", "raw/iris.csv")},
		{in: "wasb://data@acct1.blob.core.windows.net/", want: Location{Type: TypeAzureBlob, Account: "acct1", Container: "data",
			Endpoint: "http://acct1.blob.core.windows.net"}},
		{in: "abfss://fs1@lake2.dfs.core.windows.net/tables/t1/", want: Location{Type: TypeADLSGen2, Account: "lake2",
			Container: "fs1", Path: "tables/t1", Endpoint: "https://lake2.blob.core.windows.net"}},
		{in: "abfs://fs1@lake2.dfs.core.chinacloudapi.cn/t", want: Location{Type: TypeADLSGen2, Account: "lake2",
			Container: "fs1", Path: "t", Endpoint: "http://lake2.blob.core.chinacloudapi.cn"}},
		{in: "https://acct1.blob.core.windows.net/data/raw/a%20b.csv", want: blob("acct1", "data", "raw/a b.csv")},
		{in: "https://ACCT1.blob.core.windows.net/data", want: blob("acct1", "data", "")},
		{in: "https://lake2.dfs.core.usgovcloudapi.net/fs1/x/", want: Location{Type: TypeADLSGen2, Account: "lake2",
			Container: "fs1", Path: "x", Endpoint: "https://lake2.blob.core.usgovcloudapi.net"}},
		{in: "s3://bk1/a/../../etc", errHas: "not a clean path"},
		{in: "s3://bk1/a//b", errHas: "not a clean path"},
		{in: "gs://bk1/./x", errHas: "not a clean path"},
		{in: "wasbs://data@acct1.blob.core.windows.net/a/%2E%2E/%2E%2E/x", errHas: "not a clean path"},
		{in: "s3://B/x", errHas: "not a bucket name"},
		{in: "s3:///x", errHas: "not a bucket name"},
		{in: "wasbs://acct1.blob.core.windows.net/x", errHas: "expected wasbs://<container>@<account>.blob"},
		{in: "wasbs://data@acct1.dfs.core.windows.net/x", errHas: "expected <account>.blob."},
		{in: "abfss://fs@lake.blob.core.windows.net/x", errHas: "expected <account>.dfs."},
		{in: "wasbs://data@acct1.blob.example.com/x", errHas: "expected <account>.blob."},
		{in: "wasbs://Data@acct1.blob.core.windows.net/x", errHas: "not a container name"},
		{in: "https://a.blob.core.windows.net/data/x", errHas: "not a storage account name"},
		{in: "https://acct1.blob.core.windows.net/", errHas: "expected https://acct1.blob.core.windows.net/<container>/<path>"},
		{in: "https://acct1.blob.core.windows.net/data/x?sv=2024&sig=SECRETSIG", errHas: "a query (a SAS token?) is not taken"},
		{in: "wasbs://data@acct1.blob.core.windows.net/x?sig=SECRETSIG", errHas: "a query (a SAS token?) is not taken"},
		{in: "ftp://host/x", errHas: "scheme ftp"},
		{in: "bucket/x", errHas: "expected s3://"},
	}
	for _, tt := range tests {
		got, err := ParseObjectURI(tt.in)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("ParseObjectURI(%q) = %+v, %v; want an error with %q", tt.in, got, err, tt.errHas)
			}
			if err != nil && strings.Contains(err.Error(), "SECRETSIG") {
				t.Errorf("ParseObjectURI(%q): the error repeats the query: %v", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseObjectURI(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseObjectURI(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestIsObjectURI(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"s3://b/x", true}, {"GS://b", true}, {"wasbs://c@a.blob.core.windows.net/x", true},
		{"abfs://f@a.dfs.core.windows.net", true},
		{"https://acct1.blob.core.windows.net/c/x", true},
		{"https://acct1.dfs.core.chinacloudapi.cn/c/x", true},
		{"https://example.com/titanic.csv", false},
		{"https://acct1.file.core.windows.net/share/x", false},
		{"http://127.0.0.1:10000/devstoreaccount1/c/x", false},
		{"azureml://datastores/x/paths/y", false},
		{"./local/folder", false},
	}
	for _, tt := range tests {
		if got := IsObjectURI(tt.in); got != tt.want {
			t.Errorf("IsObjectURI(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// A URI read back through Location.URI is the cloud's own URI again, in its own cloud.
func TestObjectURIRoundTrip(t *testing.T) {
	for _, in := range []string{
		"s3://bk1/data/x.csv", "gs://bk1/d/", "wasbs://data@acct1.blob.core.windows.net/raw/x",
		"abfss://fs1@lake2.dfs.core.chinacloudapi.cn/t/x",
	} {
		l, err := ParseObjectURI(in)
		if err != nil {
			t.Fatalf("ParseObjectURI(%q): %v", in, err)
		}
		if got, want := l.URI(), strings.TrimSuffix(in, "/"); got != want {
			t.Errorf("ParseObjectURI(%q).URI() = %q, want %q", in, got, want)
		}
	}
}

func TestLocationCovers(t *testing.T) {
	s3 := Datastore{Name: "lake", Type: TypeS3, Bucket: "bk1", EndpointURL: "http://127.0.0.1:9000"}
	gcs := Datastore{Name: "g", Type: TypeGCS, Bucket: "bk1"}
	blob := Datastore{Name: "ab", Type: TypeAzureBlob, AccountName: "acct1", ContainerName: "data"}
	gen2 := Datastore{Name: "lk", Type: TypeADLSGen2, AccountName: "acct1", Filesystem: "fs1"}
	local := Datastore{Name: "shared", Type: TypeLocalFolder, Path: "/shared"}
	tests := []struct {
		uri  string
		ds   Datastore
		want bool
	}{
		{"s3://bk1/x", s3, true},
		{"s3://bk2/x", s3, false},
		{"gs://bk1/x", s3, false},
		{"gs://bk1/x", gcs, true},
		{"wasbs://data@acct1.blob.core.windows.net/x", blob, true},
		{"abfss://data@acct1.dfs.core.windows.net/x", blob, true},
		{"wasbs://data@acct2.blob.core.windows.net/x", blob, false},
		{"wasbs://other@acct1.blob.core.windows.net/x", blob, false},
		{"abfss://fs1@acct1.dfs.core.windows.net/x", gen2, true},
		{"https://acct1.blob.core.windows.net/fs1/x", gen2, true},
		{"s3://bk1/x", local, false},
	}
	for _, tt := range tests {
		l, err := ParseObjectURI(tt.uri)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Covers(tt.ds); got != tt.want {
			t.Errorf("%s covered by %s = %v, want %v", tt.uri, tt.ds.Name, got, tt.want)
		}
	}
}

func TestLocationForRun(t *testing.T) {
	l := Location{Type: TypeS3, Container: "b", Path: "runs/${{name}}/out"}
	if got := l.ForRun("plucky_otter").Path; got != "runs/plucky_otter/out" {
		t.Errorf("ForRun = %q", got)
	}
}
