package datastore

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	blob := Datastore{Name: "b", Type: TypeAzureBlob, AccountName: "acct1", ContainerName: "data"}
	with := func(d Datastore, f func(*Datastore)) Datastore { f(&d); return d }
	tests := []struct {
		name   string
		d      Datastore
		errHas string
	}{
		{"azure_blob", blob, ""},
		{"azure_blob on Azurite", with(blob, func(d *Datastore) { d.Endpoint = "http://127.0.0.1:10000/devstoreaccount1" }), ""},
		{"a sovereign cloud's suffix", with(blob, func(d *Datastore) { d.Endpoint = "core.chinacloudapi.cn"; d.Protocol = "wasbs" }), ""},
		{"gen2", Datastore{Name: "g", Type: TypeADLSGen2, AccountName: "acct1", Filesystem: "fs1", Protocol: "abfss"}, ""},
		{"s3", Datastore{Name: "s", Type: TypeS3, Bucket: "my.bucket-1", EndpointURL: "https://s3.example.com", Region: "eu-west-1"}, ""},
		{"gcs", Datastore{Name: "g", Type: TypeGCS, Bucket: "bkt"}, ""},
		{"hyphenated name", with(blob, func(d *Datastore) { d.Name = "blob-example" }), ""},
		{"a name starting with -", with(blob, func(d *Datastore) { d.Name = "-b" }), "name: "},
		{"azure_file", Datastore{Name: "f", Type: TypeAzureFile}, "type azure_file: an Azure file share"},
		{"unknown type", Datastore{Name: "f", Type: "hdfs"}, "type hdfs: not a datastore type"},
		{"gen2 with a container_name", Datastore{Name: "g", Type: TypeADLSGen2, AccountName: "acct1", ContainerName: "c1c"}, "container_name: not a field of a azure_data_lake_gen2 datastore"},
		{"a bad endpoint", with(blob, func(d *Datastore) { d.Endpoint = "not a suffix" }), "endpoint: \"not a suffix\""},
		{"an endpoint URL with a user", with(blob, func(d *Datastore) { d.Endpoint = "http://u:p@127.0.0.1:10000/a" }), "endpoint: a URL with a user or password"},
		{"gcs region", Datastore{Name: "g", Type: TypeGCS, Bucket: "bkt", Region: "x"}, "region: a gcs datastore has no region"},
		{"an s3 endpoint_url with a query", Datastore{Name: "s", Type: TypeS3, Bucket: "bkt", EndpointURL: "http://h/?a=b"}, "endpoint_url: expected an http or https URL without a query"},
		{"local_folder with a bucket", Datastore{Name: "l", Type: TypeLocalFolder, Path: "/x", Bucket: "bkt"}, "bucket: not a field of a local_folder datastore"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.d)
			if (tt.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
				t.Errorf("Check(%+v) = %v, want error %q", tt.d, err, tt.errHas)
			}
		})
	}
}

func TestCheckCredentials(t *testing.T) {
	const secret = "SECRET-0a1b"
	tests := []struct {
		typ    string
		c      Credentials
		errHas string
	}{
		{TypeAzureBlob, Credentials{}, ""},
		{TypeAzureBlob, Credentials{AccountKey: secret}, ""},
		{TypeAzureBlob, Credentials{SASToken: secret}, ""},
		{TypeADLSGen2, Credentials{TenantID: "t", ClientID: "c", ClientSecret: secret}, ""},
		{TypeS3, Credentials{AccessKeyID: "a", SecretAccessKey: secret, SessionToken: secret}, ""},
		{TypeGCS, Credentials{ServiceAccountJSON: "{}"}, ""},
		{TypeLocalFolder, Credentials{AccountKey: secret}, "credentials: a local_folder datastore has no credentials"},
		{TypeGCS, Credentials{AccessKeyID: "a", SecretAccessKey: secret}, "credentials.access_key_id: not a credential of a gcs datastore"},
		{TypeAzureBlob, Credentials{AccountKey: secret, ClientSecret: secret, TenantID: "t", ClientID: "c"}, "credentials: account_key, tenant_id, client_id, client_secret given together"},
		{TypeADLSGen2, Credentials{ClientID: "c", ClientSecret: secret}, "needs tenant_id, client_id and client_secret"},
		{TypeS3, Credentials{SecretAccessKey: secret}, "needs access_key_id and secret_access_key"},
		{TypeS3, Credentials{SessionToken: secret}, "needs access_key_id and secret_access_key"},
	}
	for _, tt := range tests {
		err := CheckCredentials(tt.typ, tt.c)
		if (tt.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
			t.Errorf("CheckCredentials(%s, %v) = %v, want error %q", tt.typ, tt.c.given(), err, tt.errHas)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the error repeats a credential: %v", err)
		}
	}
	if got := (Credentials{SASToken: "?sv=1&sig=x"}).Normalized().SASToken; got != "sv=1&sig=x" {
		t.Errorf("Normalized SAS = %q", got)
	}
}
