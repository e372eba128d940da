package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// Object-store datastore files in the shape of Azure's examples (cli/resources/datastore of
// Azure/azureml-examples: blob.yml, blob-sas.yml, blob-protocol.yml, blob-credless.yml,
// adls-gen2.yml, adls-gen2-credless.yml), and Hangar's s3 and gcs, decode unchanged.
func TestParseObjectDatastores(t *testing.T) {
	const blobSchema = "$schema: https://azuremlschemas.azureedge.net/latest/azureBlob.schema.json\n"
	const gen2Schema = "$schema: https://azuremlschemas.azureedge.net/latest/azureDataLakeGen2.schema.json\n"
	tests := []struct {
		name, yml string
		want      datastore.Datastore
		creds     *datastore.Credentials
	}{
		{"blob with an account key", blobSchema + "name: blob-example\ntype: azure_blob\ndescription: Datastore pointing to a blob container.\n" +
			"account_name: mytestblobstore\ncontainer_name: data-container\ncredentials:\n  account_key: XXXxxxXXXxXXXX\n",
			datastore.Datastore{Name: "blob-example", Type: datastore.TypeAzureBlob, Description: "Datastore pointing to a blob container.",
				AccountName: "mytestblobstore", ContainerName: "data-container"}, &datastore.Credentials{AccountKey: "XXXxxxXXXxXXXX"}},
		{"blob with a SAS token (its ? dropped)", blobSchema + "name: blob-sas-example\ntype: azure_blob\naccount_name: mytestblobstore\n" +
			"container_name: data-container\ncredentials:\n  sas_token: ?xx=XXXX-XX-XX&xx=xxxx\n",
			datastore.Datastore{Name: "blob-sas-example", Type: datastore.TypeAzureBlob, AccountName: "mytestblobstore", ContainerName: "data-container"},
			&datastore.Credentials{SASToken: "xx=XXXX-XX-XX&xx=xxxx"}},
		{"blob over wasbs", blobSchema + "name: blob_protocol_example\ntype: azure_blob\naccount_name: mytestblobstore\nprotocol: wasbs\n" +
			"container_name: data-container\ncredentials:\n  account_key: k\n",
			datastore.Datastore{Name: "blob_protocol_example", Type: datastore.TypeAzureBlob, AccountName: "mytestblobstore", ContainerName: "data-container",
				Protocol: "wasbs"}, &datastore.Credentials{AccountKey: "k"}},
		{"blob without credentials", blobSchema + "name: blob-credless-example\ntype: azure_blob\naccount_name: mytestblobstore\ncontainer_name: data-container",
			datastore.Datastore{Name: "blob-credless-example", Type: datastore.TypeAzureBlob, AccountName: "mytestblobstore", ContainerName: "data-container"}, nil},
		{"blob on Azurite", "name: local_blob\ntype: azure_blob\naccount_name: devstoreaccount1\ncontainer_name: data\n" +
			"endpoint: http://127.0.0.1:10000/devstoreaccount1\ncredentials:\n  account_key: k\n",
			datastore.Datastore{Name: "local_blob", Type: datastore.TypeAzureBlob, AccountName: "devstoreaccount1", ContainerName: "data",
				Endpoint: "http://127.0.0.1:10000/devstoreaccount1"}, &datastore.Credentials{AccountKey: "k"}},
		{"adls gen2 with a service principal", gen2Schema + "name: adls_gen2_example\ntype: azure_data_lake_gen2\naccount_name: mytestdatalakegen2\n" +
			"filesystem: my-gen2-container\ncredentials:\n  tenant_id: t\n  client_id: c\n  client_secret: s\n",
			datastore.Datastore{Name: "adls_gen2_example", Type: datastore.TypeADLSGen2, AccountName: "mytestdatalakegen2", Filesystem: "my-gen2-container"},
			&datastore.Credentials{TenantID: "t", ClientID: "c", ClientSecret: "s"}},
		{"adls gen2 without credentials", gen2Schema + "name: adls_gen2_credless_example\ntype: azure_data_lake_gen2\naccount_name: mytestdatalakegen2\nfilesystem: my-gen2-container\n",
			datastore.Datastore{Name: "adls_gen2_credless_example", Type: datastore.TypeADLSGen2, AccountName: "mytestdatalakegen2", Filesystem: "my-gen2-container"}, nil},
		{"s3 on an S3-compatible server", "name: s3ds\ntype: s3\nbucket: my-bucket\nendpoint_url: http://127.0.0.1:7070\nregion: us-east-1\n" +
			"credentials:\n  access_key_id: AKID\n  secret_access_key: SECRET\n  session_token: TOKEN\ntags: {team: vision}\n",
			datastore.Datastore{Name: "s3ds", Type: datastore.TypeS3, Bucket: "my-bucket", EndpointURL: "http://127.0.0.1:7070", Region: "us-east-1",
				Tags: map[string]string{"team": "vision"}}, &datastore.Credentials{AccessKeyID: "AKID", SecretAccessKey: "SECRET", SessionToken: "TOKEN"}},
		{"gcs with inline JSON", "name: gcsds\ntype: gcs\nbucket: my-bucket\ncredentials:\n  service_account_json: '{\"type\": \"service_account\"}'\n",
			datastore.Datastore{Name: "gcsds", Type: datastore.TypeGCS, Bucket: "my-bucket"}, &datastore.Credentials{ServiceAccountJSON: `{"type": "service_account"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, warnings, err := ParseDatastore("ds.yml", []byte(tt.yml), nil)
			if err != nil || len(warnings) != 0 {
				t.Fatalf("ParseDatastore = %v, warnings %v", err, warnings)
			}
			if diff := cmp.Diff(tt.want, f.Datastore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("datastore (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.creds, f.Credentials); diff != "" {
				t.Errorf("credentials (-want +got):\n%s", diff)
			}
		})
	}
}

// A GCS key file named by path is read next to the YAML.
func TestParseDatastoreGCSKeyFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key.json"), []byte(`{"type": "service_account", "private_key": "k"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "gcs.yml")
	if err := os.WriteFile(file, []byte("name: g\ntype: gcs\nbucket: bkt\ncredentials:\n  service_account_json: key.json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, err := ParseDatastoreFile(file, nil)
	if err != nil || f.Credentials == nil || f.Credentials.ServiceAccountJSON != `{"type": "service_account", "private_key": "k"}` {
		t.Fatalf("ParseDatastoreFile = %+v, %v", f, err)
	}
}

// Refusals name the file, the line and the field path, and never repeat a credential.
func TestParseDatastoreRefusals(t *testing.T) {
	const secret = "SECRET-VALUE-1f2e"
	tests := []struct{ name, yml, errHas string }{
		{"azure_file", "name: file_example\ntype: azure_file\naccount_name: a\nfile_share_name: s\n",
			"ds.yml: type: type azure_file: an Azure file share is an SMB share, not an object store; Hangar's datastores are of type local_folder, azure_blob, azure_data_lake_gen2, s3, gcs"},
		{"one_lake", "name: o\ntype: one_lake\n", "type one_lake: OneLake is Microsoft Fabric's"},
		{"blob without a container", "name: b\ntype: azure_blob\naccount_name: acct1\n", "ds.yml: container_name: required"},
		{"s3 without a bucket", "name: b\ntype: s3\n", "ds.yml: bucket: required"},
		{"a bad account name", "name: b\ntype: azure_blob\naccount_name: My_Account\ncontainer_name: data\n", "ds.yml: account_name: \"My_Account\" is not a storage account name"},
		{"a bad protocol", "name: b\ntype: azure_data_lake_gen2\naccount_name: acct1\nfilesystem: fs1\nprotocol: wasbs\n", "ds.yml: protocol: \"wasbs\": expected one of https, abfss"},
		{"a container on s3", "name: b\ntype: s3\nbucket: bkt\ncontainer_name: c\n", "container_name: not a field of a s3 datastore"},
		{"a bad endpoint_url", "name: b\ntype: s3\nbucket: bkt\nendpoint_url: ftp://x\n", "ds.yml: endpoint_url: expected an http or https URL"},
		{"a path on s3", "name: b\ntype: s3\nbucket: bkt\npath: /data\n", "path: a s3 datastore has no path or computes"},
		{"azure credentials on s3", "name: b\ntype: s3\nbucket: bkt\ncredentials:\n  account_key: " + secret + "\n",
			"ds.yml: credentials.account_key: not a credential of a s3 datastore (expected access_key_id with secret_access_key (and session_token))"},
		{"two kinds", "name: b\ntype: azure_blob\naccount_name: acct1\ncontainer_name: data\ncredentials:\n  account_key: " + secret + "\n  sas_token: " + secret + "\n",
			"credentials: account_key, sas_token given together"},
		{"half a service principal", "name: b\ntype: azure_blob\naccount_name: acct1\ncontainer_name: data\ncredentials:\n  client_secret: " + secret + "\n",
			"credentials: a service principal needs tenant_id, client_id and client_secret"},
		{"an unknown credential", "name: b\ntype: s3\nbucket: bkt\ncredentials:\n  password: " + secret + "\n", "credentials.password: unknown field"},
		{"a missing key file", "name: g\ntype: gcs\nbucket: bkt\ncredentials:\n  service_account_json: nope.json\n", "credentials.service_account_json: read the key file nope.json"},
		{"a key that is no JSON", "name: g\ntype: gcs\nbucket: bkt\ncredentials:\n  service_account_json: '{" + secret + "'\n", "credentials.service_account_json: expected a service account's JSON key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseDatastore("ds.yml", []byte(tt.yml), nil)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("ParseDatastore = %v; want an error with %q", err, tt.errHas)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error repeats a credential: %v", err)
			}
		})
	}
}

// A credential is never taken from --set, even over a key the file has; the value is not repeated.
func TestParseDatastoreCredentialsNotFromSet(t *testing.T) {
	yml := "name: s\ntype: s3\nbucket: bkt\ncredentials:\n  access_key_id: a\n  secret_access_key: b\n"
	for _, set := range []string{"credentials.secret_access_key=XYZSECRET", "credentials={}"} {
		_, _, err := ParseDatastore("ds.yml", []byte(yml), []string{set})
		if err == nil || !strings.Contains(err.Error(), "credentials are given in the file only") || strings.Contains(err.Error(), "XYZSECRET") {
			t.Errorf("--set %s: %v", set, err)
		}
	}
	if f, _, err := ParseDatastore("ds.yml", []byte(yml), []string{"region=eu-west-1"}); err != nil || f.Datastore.Region != "eu-west-1" {
		t.Errorf("--set region: %+v, %v", f, err)
	}
}
