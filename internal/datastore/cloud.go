package datastore

import (
	"encoding/json"
	"strings"
)

// Object-storage datastores (docs/data.md): data that stays in a cloud store (Azure Blob, ADLS
// Gen2, any S3-compatible server, Google Cloud Storage), which nodes read and write directly
// with the datastore's credentials, never through the server.
const (
	TypeAzureBlob  = "azure_blob"
	TypeADLSGen2   = "azure_data_lake_gen2"
	TypeAzureFile  = "azure_file"
	TypeADLSGen1   = "azure_data_lake_gen1"
	TypeOneLake    = "one_lake"
	TypeS3         = "s3"
	TypeGCS        = "gcs"
	defaultAzureEP = "core.windows.net"
)

// ObjectTypes are the datastore types whose data lies in an object store.
var ObjectTypes = []string{TypeAzureBlob, TypeADLSGen2, TypeS3, TypeGCS}

// IsObjectType reports whether t is an object-store datastore type.
func IsObjectType(t string) bool {
	for _, o := range ObjectTypes {
		if o == t {
			return true
		}
	}
	return false
}

// Credentials are an object-store datastore's secrets. They are sealed at rest with the
// workspace key, never shown, and handed only to the supervisor of a live run that names the
// datastore. The zero value means the node's ambient identity (its environment, its instance
// metadata), where the cloud has one.
type Credentials struct {
	// Azure: a storage account key, or a SAS token (without the leading ?).
	AccountKey string `json:"account_key,omitempty"`
	SASToken   string `json:"sas_token,omitempty"`
	// Azure: a service principal.
	TenantID     string `json:"tenant_id,omitempty"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// S3: an access key, with a session token for temporary credentials.
	AccessKeyID     string `json:"access_key_id,omitempty"`
	SecretAccessKey string `json:"secret_access_key,omitempty"`
	SessionToken    string `json:"session_token,omitempty"`
	// GCS: a service account's JSON key file's content.
	ServiceAccountJSON string `json:"service_account_json,omitempty"`
}

// Kind names which credentials these are, for show and list (never their values): account_key,
// sas_token, service_principal, access_key, service_account, or "" (the node's identity).
func (c Credentials) Kind() string {
	switch {
	case c.AccountKey != "":
		return "account_key"
	case c.SASToken != "":
		return "sas_token"
	case c.ClientSecret != "":
		return "service_principal"
	case c.AccessKeyID != "":
		return "access_key"
	case c.ServiceAccountJSON != "":
		return "service_account"
	}
	return ""
}

// Values are the secret strings, for redacting them from logs and messages.
func (c Credentials) Values() []string {
	var out []string
	for _, v := range []string{c.AccountKey, c.SASToken, c.ClientSecret, c.SecretAccessKey, c.SessionToken, c.ServiceAccountJSON} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Location is where a job's data input or output lies in an object store, resolved when the job
// is created and frozen with the run: the store's address and the path inside it. Datastore
// names the registered datastore whose credentials the run's supervisor gets; it is empty for a
// direct URI that no datastore of the workspace covers (the node's ambient identity is used).
type Location struct {
	Datastore string `json:"datastore,omitempty"`
	Type      string `json:"type"` // one of ObjectTypes
	// Account is the Azure storage account.
	Account string `json:"account,omitempty"`
	// Container is the Azure container or ADLS Gen2 filesystem, or the S3/GCS bucket.
	Container string `json:"container"`
	// Endpoint is the service's URL: an Azure account's blob endpoint
	// (https://<account>.blob.core.windows.net, or an emulator's http://127.0.0.1:10000/<account>),
	// an S3-compatible server's URL ("" for AWS), a GCS endpoint ("" for Google's).
	Endpoint string `json:"endpoint,omitempty"`
	Region   string `json:"region,omitempty"`
	// Path is the object key or key prefix inside the container: clean, relative, slash-separated,
	// "" for the container's top.
	Path string `json:"path,omitempty"`
}

// URI is the location as its cloud's own URI, for messages and for the user to read with the
// store's own tools: s3://bucket/path, gs://bucket/path, wasbs://container@account.blob.../path,
// abfss://filesystem@account.dfs.../path.
func (l Location) URI() string {
	p := strings.TrimPrefix(l.Path, "/")
	switch l.Type {
	case TypeS3:
		return "s3://" + l.Container + "/" + p
	case TypeGCS:
		return "gs://" + l.Container + "/" + p
	case TypeADLSGen2:
		return "abfss://" + l.Container + "@" + l.Account + ".dfs." + l.azureSuffix() + "/" + p
	default:
		return "wasbs://" + l.Container + "@" + l.Account + ".blob." + l.azureSuffix() + "/" + p
	}
}

// String names the location in messages: the datastore and path when a datastore holds it.
func (l Location) String() string {
	if l.Datastore != "" {
		return "datastore " + l.Datastore + " path " + l.Path + " (" + l.URI() + ")"
	}
	return l.URI()
}

// Locate is where p (a clean relative path, see ParseURI) lies in an object-store datastore.
func (d Datastore) Locate(p string) Location {
	l := Location{Datastore: d.Name, Type: d.Type, Region: d.Region, Path: p}
	switch d.Type {
	case TypeS3, TypeGCS:
		l.Container, l.Endpoint = d.Bucket, d.EndpointURL
	default:
		l.Account, l.Container = d.AccountName, d.ContainerName
		if d.Type == TypeADLSGen2 {
			l.Container = d.Filesystem
		}
		l.Endpoint = d.BlobEndpoint()
	}
	return l
}

// BlobEndpoint is an Azure datastore's blob service URL: <protocol>://<account>.blob.<endpoint>,
// or Endpoint itself when it is a full URL (an emulator's, such as Azurite's
// http://127.0.0.1:10000/devstoreaccount1). ADLS Gen2 is read and written through its blob
// endpoint, which every hierarchical-namespace account also serves.
func (d Datastore) BlobEndpoint() string {
	if strings.Contains(d.Endpoint, "://") {
		return strings.TrimRight(d.Endpoint, "/")
	}
	// protocol: wasbs and abfss (Azure's other names for TLS) are https.
	ep := d.Endpoint
	if ep == "" {
		ep = defaultAzureEP
	}
	return "https://" + d.AccountName + ".blob." + ep
}

// MarshalJSON writes the location with its URI (`uri`), so that what reads it (the studio, a
// script reading `-o json`) need not know each cloud's URI form; reading ignores `uri`.
func (l Location) MarshalJSON() ([]byte, error) {
	type plain Location
	return json.Marshal(struct {
		plain
		URI string `json:"uri"`
	}{plain(l), l.URI()})
}
